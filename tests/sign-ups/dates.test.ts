// Days as the owner means them (tools/sign-ups/dates.ts): in the local time zone.
import { describe, expect, it } from "vitest";
import { formatLocal, parseSince } from "../../tools/sign-ups/dates";

describe("parseSince", () => {
  it.each([
    // A day: its local midnight.
    ["2026-11-01", new Date(2026, 10, 1)],
    // A day and a local time.
    ["2026-11-01T09:30", new Date(2026, 10, 1, 9, 30)],
    ["2026-11-01 09:30:15", new Date(2026, 10, 1, 9, 30, 15)],
    // A zone named: that instant.
    ["2026-11-01T09:30Z", new Date("2026-11-01T09:30:00Z")],
    ["2026-11-01t09:30:00.250+02:00", new Date("2026-11-01T07:30:00.250Z")],
  ])("%s → %s", (text, expected) => {
    expect(parseSince(text)).toEqual(expected);
  });

  it.each([
    // Impossible dates and times, which Date would roll over into the next.
    "2026-02-30",
    "2026-11-01T25:00",
    // …with a zone too, which Date rolls over all the same.
    "2026-02-30T09:30Z",
    "2026-04-31T09:30:00+02:00",
    // Not dates.
    "yesterday",
    "1 Nov 2026",
    "20261101",
    "",
  ])("%j is refused", (text) => {
    expect(parseSince(text)).toBeNull();
  });
});

describe("days", () => {
  it("a time reads as the local day and minute", () => {
    expect(formatLocal(new Date(2026, 0, 2, 3, 4, 59))).toBe("2026-01-02 03:04");
  });
});
