import { describe, expect, it } from "vitest";
import { localDateTime } from "../../src/lib/local-time";

const LAUNCH = "2028-01-01T00:00:00Z";

describe("localDateTime", () => {
  it.each([
    // West of UTC the launch is still on New Year's Eve, 2027.
    ["America/New_York", "Fri, Dec 31, 2027, 7:00 PM EST"],
    // A half-hour zone.
    ["America/St_Johns", "Fri, Dec 31, 2027, 8:30 PM GMT-3:30"],
    // UTC itself.
    ["UTC", "Sat, Jan 1, 2028, 12:00 AM UTC"],
    // East of UTC it is already the morning of 1 January.
    ["Asia/Kolkata", "Sat, Jan 1, 2028, 5:30 AM GMT+5:30"],
    ["Asia/Tokyo", "Sat, Jan 1, 2028, 9:00 AM GMT+9"],
  ])("%s: %s", (timeZone, expected) => {
    expect(localDateTime(LAUNCH, "en-US", timeZone)).toBe(expected);
  });

  it("follows the language's conventions", () => {
    // German: day before month, a 24-hour clock.
    expect(localDateTime(LAUNCH, "de-DE", "Europe/Berlin")).toBe("Sa., 1. Jan. 2028, 01:00 MEZ");
  });
});
