import { describe, expect, it } from "vitest";
import { calendarFile, escapeText, foldLine, utcDateTime } from "../../src/lib/calendar";

const octets = (text: string) => new TextEncoder().encode(text).length;

describe("utcDateTime", () => {
  it.each([
    // The launch.
    ["2028-01-01T00:00:00Z", "20280101T000000Z"],
    // Milliseconds are dropped, not rounded.
    ["2026-11-22T09:05:07.999Z", "20261122T090507Z"],
    // An offset is turned into UTC.
    ["2027-12-31T19:00:00-05:00", "20280101T000000Z"],
  ])("%s → %s", (iso, expected) => {
    expect(utcDateTime(iso)).toBe(expected);
  });

  it("refuses what is not a date", () => {
    expect(() => utcDateTime("soon")).toThrow(RangeError);
  });
});

describe("escapeText", () => {
  it.each([
    // Nothing to escape.
    ["The Future Awaits", "The Future Awaits"],
    // Commas and semicolons separate values in iCalendar.
    ["thinks, creates; works", "thinks\\, creates\\; works"],
    // A backslash is escaped first, so it is not mistaken for an escape.
    ["a\\b", "a\\\\b"],
    // Line breaks of every kind become the two characters \n.
    ["one\ntwo\r\nthree\rfour", "one\\ntwo\\nthree\\nfour"],
    // Colons need no escape in a value.
    ["http://localhost:4321/", "http://localhost:4321/"],
  ])("%j → %j", (text, expected) => {
    expect(escapeText(text)).toBe(expected);
  });
});

describe("foldLine", () => {
  it.each([
    // Exactly 75 octets stay on one line.
    ["75 octets", "x".repeat(75), ["x".repeat(75)]],
    // 76 octets: the 76th continues on a line that begins with a space.
    ["76 octets", "x".repeat(76), ["x".repeat(75), " x"]],
    // Continuation lines hold 74 octets after their space.
    ["three lines", "x".repeat(75 + 74 + 1), ["x".repeat(75), ` ${"x".repeat(74)}`, " x"]],
    // A two-octet character that would straddle the 75th octet moves to the next line whole.
    ["no split character", `${"x".repeat(74)}é`, ["x".repeat(74), " é"]],
    // A four-octet emoji likewise.
    ["no split emoji", `${"x".repeat(73)}🚀`, ["x".repeat(73), " 🚀"]],
  ])("%s", (_name, line, expected) => {
    const folded = foldLine(line);
    expect(folded.split("\r\n")).toEqual(expected);
    for (const physical of folded.split("\r\n")) expect(octets(physical)).toBeLessThanOrEqual(75);
    // Unfolding (RFC 5545 §3.1) gives back the line.
    expect(folded.replaceAll("\r\n ", "")).toBe(line);
  });
});

describe("calendarFile", () => {
  const file = calendarFile(
    {
      uid: "launch@example.com",
      stamp: "2026-11-22T00:00:00Z",
      start: "2028-01-01T00:00:00Z",
      summary: "The Future Awaits: launch",
      description: `Arrives today, up to 20% off; see ${"https://example.com/".repeat(4)}`,
      url: "https://example.com/",
    },
    "-//The Future Awaits//Launch//EN",
  );
  const lines = file.replaceAll("\r\n ", "").split("\r\n");

  it("is one VEVENT inside a VCALENDAR 2.0 with a PRODID", () => {
    expect(lines).toEqual([
      "BEGIN:VCALENDAR",
      "VERSION:2.0",
      "PRODID:-//The Future Awaits//Launch//EN",
      "CALSCALE:GREGORIAN",
      "METHOD:PUBLISH",
      "BEGIN:VEVENT",
      "UID:launch@example.com",
      "DTSTAMP:20261122T000000Z",
      "DTSTART:20280101T000000Z",
      "SUMMARY:The Future Awaits: launch",
      `DESCRIPTION:Arrives today\\, up to 20% off\\; see ${"https://example.com/".repeat(4)}`,
      "URL:https://example.com/",
      "END:VEVENT",
      "END:VCALENDAR",
      "",
    ]);
  });

  it("ends every line with CRLF and folds long ones", () => {
    expect(file.endsWith("\r\n")).toBe(true);
    expect(file.replaceAll("\r\n", "")).not.toMatch(/[\r\n]/);
    for (const line of file.split("\r\n")) expect(octets(line)).toBeLessThanOrEqual(75);
    expect(file).toContain("\r\n ");
  });
});
