import { describe, expect, it } from "vitest";
import { fillPlaceholders, unknownPlaceholders } from "../../src/lib/placeholders";

const VALUES = { year: "2028", date: "January 1, 2028, 00:00 UTC", name: "The Future Awaits" };

describe("fillPlaceholders", () => {
  it.each([
    // One placeholder.
    ["Return to {year}", "Return to 2028"],
    // Several, and one twice.
    ["{name}: {year}, {year}", "The Future Awaits: 2028, 2028"],
    // The launch in UTC.
    ["Launching {date}", "Launching January 1, 2028, 00:00 UTC"],
    // No placeholder: unchanged.
    ["Notify Me", "Notify Me"],
    // Unknown braces are left as they are (the schema refuses them before this runs).
    ["{yaer}", "{yaer}"],
  ])("%j", (text, expected) => {
    expect(fillPlaceholders(text, VALUES)).toBe(expected);
  });
});

describe("unknownPlaceholders", () => {
  it.each([
    // Known ones only.
    ["{name}: coming {year}", []],
    // A misspelt one.
    ["Return to {yaer}", ["{yaer}"]],
    // Case matters.
    ["{Year}", ["{Year}"]],
    // Empty braces.
    ["a {} b", ["{}"]],
    // No braces.
    ["Coming Soon", []],
  ])("%j", (text, expected) => {
    expect(unknownPlaceholders(text)).toEqual(expected);
  });
});
