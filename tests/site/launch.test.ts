import { describe, expect, it } from "vitest";
import { describeLaunch, parseInstant } from "../../src/lib/launch";

describe("parseInstant", () => {
  it.each([
    // In UTC.
    ["UTC", "2028-01-01T00:00:00Z", "2028-01-01T00:00:00.000Z"],
    // With an offset: the same instant in UTC.
    ["an offset", "2028-01-01T01:00:00+01:00", "2028-01-01T00:00:00.000Z"],
    // A negative offset moves the instant forward in UTC.
    ["a negative offset", "2027-12-31T19:00:00-05:00", "2028-01-01T00:00:00.000Z"],
    // Seconds may be left out, and fractions given.
    ["no seconds", "2028-01-01T00:00Z", "2028-01-01T00:00:00.000Z"],
    ["a fraction", "2028-01-01T00:00:00.5Z", "2028-01-01T00:00:00.500Z"],
    // February 29 of a leap year.
    ["a leap day", "2028-02-29T12:00:00Z", "2028-02-29T12:00:00.000Z"],
  ])("%s", (_name, value, expected) => {
    expect(parseInstant(value)?.toISOString()).toBe(expected);
  });

  it.each([
    // Text without an offset would mean the build machine's own time zone.
    ["no offset", "2028-01-01T00:00:00"],
    // Words, not an instant.
    ["words", "January 1, 2028"],
    // A date without a time: midnight where?
    ["a bare date", "2028-01-01"],
    // Days and times the calendar and the clock do not have (JavaScript would roll them over).
    ["February 30", "2028-02-30T00:00:00Z"],
    ["February 29 of a common year", "2027-02-29T00:00:00Z"],
    ["month 13", "2028-13-01T00:00:00Z"],
    ["hour 24", "2028-01-01T24:00:00Z"],
    ["an offset of 25 hours", "2028-01-01T00:00:00+25:00"],
    // Not text at all (a Date is what js-yaml's default schema would have made).
    ["a Date", new Date("2028-01-01T00:00:00Z")],
    // Left out.
    ["missing", undefined],
    // A number, such as a bare year.
    ["a year", 2028],
  ])("refuses %s", (_name, value) => {
    expect(parseInstant(value)).toBeNull();
  });
});

describe("describeLaunch", () => {
  it.each([
    // The launch the site announces.
    ["2028-01-01T00:00:00Z", { at: "2028-01-01T00:00:00Z", year: "2028", utc: "January 1, 2028, 00:00 UTC" }],
    // Noon, in another year: a 24-hour clock.
    ["2027-06-15T12:00:00Z", { at: "2027-06-15T12:00:00Z", year: "2027", utc: "June 15, 2027, 12:00 UTC" }],
    // Given with an offset: the year, the date and the time in UTC, whatever the build's zone.
    [
      "2028-01-01T00:30:00+01:00",
      { at: "2027-12-31T23:30:00Z", year: "2027", utc: "December 31, 2027, 23:30 UTC" },
    ],
    // Milliseconds are kept when there are any.
    [
      "2028-01-01T00:00:00.250Z",
      { at: "2028-01-01T00:00:00.250Z", year: "2028", utc: "January 1, 2028, 00:00 UTC" },
    ],
  ])("%s", (iso, expected) => {
    expect(describeLaunch(new Date(iso))).toEqual(expected);
  });
});
