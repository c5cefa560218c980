// How the list grew, in the owner's time zone (tools/sign-ups/growth.ts): the database's UTC
// hours and their quarters, added up into local days and hours, whatever the zone's offset and
// across its clock changes.
import { describe, expect, it } from "vitest";
import {
  CHART_DAYS,
  CHART_HOURS,
  chartWindow,
  foldIntoDays,
  lastHours,
  localDay,
  recentTotals,
  type HourCount,
} from "../../tools/sign-ups/growth";

/** A UTC hour's row as the database returns it, its sign-ups from :00, :15, :30 and :45. */
const hour = (startsAt: string, byQuarter: number[]): HourCount => ({
  starts_at: startsAt.replace("Z", "+00:00"),
  sign_ups: byQuarter.reduce((sum, count) => sum + count, 0),
  by_quarter: byQuarter,
});

describe("foldIntoDays", () => {
  it.each([
    {
      case: "UTC, at midnight: the hour from 00:00 is the new day's, the one before the old day's",
      zone: "UTC",
      hours: [hour("2026-11-21T23:00:00Z", [1, 1, 1, 1]), hour("2026-11-22T00:00:00Z", [2, 0, 0, 0])],
      days: { "2026-11-21": 4, "2026-11-22": 2 },
    },
    {
      case: "Paris, at local midnight (23:00 UTC in winter)",
      zone: "Europe/Paris",
      hours: [hour("2026-11-21T22:00:00Z", [1, 0, 0, 1]), hour("2026-11-21T23:00:00Z", [4, 0, 0, 0])],
      days: { "2026-11-21": 2, "2026-11-22": 4 },
    },
    {
      case: "Paris, the day clocks go forward (23 hours: 23:00 UTC to 22:00 UTC)",
      zone: "Europe/Paris",
      hours: [
        hour("2026-03-28T22:00:00Z", [0, 0, 0, 1]), // 23:45 CET, the day before
        hour("2026-03-28T23:00:00Z", [2, 0, 0, 0]), // 00:00 CET
        hour("2026-03-29T01:00:00Z", [4, 0, 0, 0]), // 03:00 CEST, just after the change
        hour("2026-03-29T21:00:00Z", [0, 0, 0, 8]), // 23:45 CEST
        hour("2026-03-29T22:00:00Z", [16, 0, 0, 0]), // 00:00 CEST, the day after
      ],
      days: { "2026-03-28": 1, "2026-03-29": 14, "2026-03-30": 16 },
    },
    {
      case: "Paris, the day clocks go back (25 hours: 22:00 UTC to 23:00 UTC)",
      zone: "Europe/Paris",
      hours: [
        hour("2026-10-24T21:00:00Z", [0, 0, 0, 1]), // 23:45 CEST, the day before
        hour("2026-10-24T22:00:00Z", [2, 0, 0, 0]), // 00:00 CEST
        hour("2026-10-25T00:00:00Z", [4, 0, 0, 0]), // 02:00 CEST
        hour("2026-10-25T01:00:00Z", [8, 0, 0, 0]), // 02:00 CET, the same hour again
        hour("2026-10-25T22:00:00Z", [0, 0, 0, 16]), // 23:45 CET
        hour("2026-10-25T23:00:00Z", [32, 0, 0, 0]), // 00:00 CET, the day after
      ],
      days: { "2026-10-24": 1, "2026-10-25": 30, "2026-10-26": 32 },
    },
    {
      case: "New York, the day clocks go forward (02:00 EST is 03:00 EDT)",
      zone: "America/New_York",
      hours: [
        hour("2026-03-08T04:00:00Z", [0, 0, 0, 1]), // 23:45 EST, the day before
        hour("2026-03-08T05:00:00Z", [2, 0, 0, 0]), // 00:00 EST
        hour("2026-03-09T03:00:00Z", [0, 0, 0, 4]), // 23:45 EDT
        hour("2026-03-09T04:00:00Z", [8, 0, 0, 0]), // 00:00 EDT, the day after
      ],
      days: { "2026-03-07": 1, "2026-03-08": 6, "2026-03-09": 8 },
    },
    {
      case: "India (UTC+5:30): local midnight is 18:30 UTC, halfway through a UTC hour",
      zone: "Asia/Kolkata",
      hours: [hour("2026-11-21T18:00:00Z", [1, 2, 4, 8])],
      days: { "2026-11-21": 3, "2026-11-22": 12 },
    },
    {
      case: "Nepal (UTC+5:45): local midnight is 18:15 UTC",
      zone: "Asia/Kathmandu",
      hours: [hour("2026-11-21T18:00:00Z", [1, 2, 4, 8])],
      days: { "2026-11-21": 1, "2026-11-22": 14 },
    },
    {
      case: "Newfoundland (UTC−3:30): local midnight is 03:30 UTC",
      zone: "America/St_Johns",
      hours: [hour("2026-11-22T03:00:00Z", [1, 2, 4, 8])],
      days: { "2026-11-21": 3, "2026-11-22": 12 },
    },
  ])("$case", ({ zone, hours, days }) => {
    const folded = foldIntoDays(hours, Object.keys(days), zone);
    expect(Object.fromEntries(folded.map(({ day, sign_ups }) => [day, sign_ups]))).toEqual(days);
  });

  it("gives every day of the window its bar, 0 for a day without sign-ups, with its weekday", () => {
    const days = ["2026-11-21", "2026-11-22", "2026-11-23"];
    expect(foldIntoDays([hour("2026-11-23T10:00:00Z", [0, 5, 0, 0])], days, "UTC")).toEqual([
      { day: "2026-11-21", time: "00:00", weekday: "Sat", sign_ups: 0 },
      { day: "2026-11-22", time: "00:00", weekday: "Sun", sign_ups: 0 },
      { day: "2026-11-23", time: "00:00", weekday: "Mon", sign_ups: 5 },
    ]);
  });

  it("leaves out hours outside the window's days", () => {
    const folded = foldIntoDays([hour("2026-11-20T10:00:00Z", [5, 0, 0, 0])], ["2026-11-21"], "UTC");
    expect(folded.map(({ sign_ups }) => sign_ups)).toEqual([0]);
  });
});

describe("lastHours", () => {
  const times = (periods: { time: string }[]) => periods.map(({ time }) => time);

  it("gives 48 local hours, the current one last, each with its sign-ups", () => {
    const now = new Date("2026-11-22T10:10:00Z");
    const hours = lastHours([hour("2026-11-22T10:00:00Z", [3, 0, 0, 0])], now, "UTC");
    expect(hours).toHaveLength(CHART_HOURS);
    expect(hours.at(-1)).toEqual({ day: "2026-11-22", time: "10:00", weekday: "Sun", sign_ups: 3 });
    expect(hours[0]).toEqual({ day: "2026-11-20", time: "11:00", weekday: "Fri", sign_ups: 0 });
  });

  it("in India, adds each UTC hour's quarters into the local hours they fall in", () => {
    // 10:10 UTC is 15:40 in India: its hour started at 09:30 UTC.
    const now = new Date("2026-11-22T10:10:00Z");
    const hours = lastHours([hour("2026-11-22T09:00:00Z", [1, 2, 4, 8])], now, "Asia/Kolkata");
    expect(hours.slice(-2)).toEqual([
      { day: "2026-11-22", time: "14:00", weekday: "Sun", sign_ups: 3 },
      { day: "2026-11-22", time: "15:00", weekday: "Sun", sign_ups: 12 },
    ]);
  });

  it("shows the hour that New York's clocks repeat twice, each with its own sign-ups", () => {
    // Clocks go back at 06:00 UTC on 2026-11-01: 01:00 EDT, then 01:00 EST.
    const now = new Date("2026-11-01T08:20:00Z");
    const counted = [hour("2026-11-01T05:00:00Z", [1, 0, 0, 0]), hour("2026-11-01T06:00:00Z", [0, 2, 0, 0])];
    const hours = lastHours(counted, now, "America/New_York");
    expect(times(hours.slice(-5))).toEqual(["00:00", "01:00", "01:00", "02:00", "03:00"]);
    expect(hours.slice(-4, -2).map(({ sign_ups }) => sign_ups)).toEqual([1, 2]);
  });

  it("skips the hour that New York's clocks skip", () => {
    // Clocks go forward at 07:00 UTC on 2026-03-08: 01:59 EST, then 03:00 EDT.
    const hours = lastHours([], new Date("2026-03-08T08:30:00Z"), "America/New_York");
    expect(times(hours.slice(-3))).toEqual(["01:00", "03:00", "04:00"]);
  });
});

describe("chartWindow", () => {
  const now = new Date("2026-11-22T10:00:00Z");

  it("shows the last 30 days, today included, for a list older than that", () => {
    const { days } = chartWindow(now, "UTC", new Date("2025-01-01T00:00:00Z"));
    expect(days).toHaveLength(CHART_DAYS);
    expect([days[0], days.at(-1)]).toEqual(["2026-10-24", "2026-11-22"]);
  });

  it("shows the days since the first sign-up's, for a younger list", () => {
    expect(chartWindow(now, "UTC", new Date("2026-11-20T23:59:00Z")).days).toEqual([
      "2026-11-20",
      "2026-11-21",
      "2026-11-22",
    ]);
  });

  it("shows today for a first sign-up on a later day than now's (stored after the command read its clock)", () => {
    expect(chartWindow(now, "UTC", new Date("2026-11-23T00:00:01Z")).days).toEqual(["2026-11-22"]);
  });

  it("uses the owner's days: 10:00 UTC on the 22nd is already the 23rd in Kiribati (UTC+14)", () => {
    expect(chartWindow(now, "Pacific/Kiritimati", now).days).toEqual(["2026-11-23"]);
  });

  it.each(["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kathmandu"])(
    "in %s, asks for every hour of the first day and of the last 48 hours",
    (zone) => {
      const { since, days } = chartWindow(now, zone, new Date("2026-11-21T12:00:00Z"));
      // Since is a UTC hour's start, still on the day before the first day.
      expect(localDay(since, zone) < days[0]!).toBe(true);
      expect(since.getTime()).toBeLessThanOrEqual(now.getTime() - CHART_HOURS * 3600_000);
      expect(since.getUTCMinutes()).toBe(0);
    },
  );
});

describe("recentTotals", () => {
  it("counts today, and the last 7 days with today", () => {
    const days = ["2026-11-14", "2026-11-15", "2026-11-16", "2026-11-20", "2026-11-21", "2026-11-22"].map(
      (day, index) => ({ day, time: "00:00", weekday: "", sign_ups: 10 ** index }),
    );
    expect(recentTotals(days, "2026-11-22")).toEqual({ today: 100_000, lastWeek: 111_100 });
  });
});
