import { describe, expect, it } from "vitest";
import { calendarDay } from "../../src/lib/calendar-day";

describe("calendarDay", () => {
  it.each([
    // An ordinary day, in its parts.
    ["2026-11-01", { year: 2026, month: 11, day: 1 }],
    // February 29 of a leap year is a day.
    ["2028-02-29", { year: 2028, month: 2, day: 29 }],
    // ... of another year it is not, nor is February 30 ever.
    ["2026-02-29", null],
    ["2028-02-30", null],
    // A month has at most 31 days, and a year 12 months.
    ["2026-04-31", null],
    ["2026-13-01", null],
    ["2026-00-10", null],
    ["2026-01-00", null],
    // Anything but YYYY-MM-DD.
    ["2026-1-1", null],
    ["2026-11-01T00:00", null],
    ["", null],
  ])("%j → %j", (text, expected) => {
    expect(calendarDay(text)).toEqual(expected);
  });
});
