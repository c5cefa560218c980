// What `count` (and `watch`) say of the list, computed from the database's three reads: how many
// in all, today and in the last 7 local days, with a phone, marked and for which reasons, and the
// chart's bars. Pure: the reads come in, the numbers go out (the words are report.ts's).
import type { ChartRow } from "./chart.ts";
import type { DomainCount, Totals } from "./rows.ts";
import {
  CHART_DAYS,
  CHART_HOURS,
  chartWindow,
  foldIntoDays,
  lastHours,
  recentTotals,
  type HourCount,
} from "./growth.ts";
import type { Reason } from "./marks.ts";
import { markDomains, markedTotals } from "./review.ts";

/** What the summary is computed from: the database's totals, hours and domains, read together. */
export interface CountsRead {
  totals: Totals;
  hours: HourCount[];
  domains: DomainCount[];
}

export interface Summary {
  signUps: number;
  /** Since local midnight. */
  today: number;
  /** In the last 7 local days, today included. */
  lastWeek: number;
  withPhone: number;
  /** Sign-ups with at least one reason, each counted once. */
  marked: number;
  byReason: Record<Reason, number>;
  /** The zone the days are counted in. */
  zone: string;
  chart: { title: string; rows: ChartRow[] };
}

/**
 * The hours to read for any chart at `now` in `zone`: those of the longest window (a list younger
 * than 30 days has no hours before its first sign-up), so that every read can go at once.
 */
export function hoursSince(now: Date, zone: string): Date {
  return chartWindow(now, zone, new Date(0)).since;
}

/** The summary at `now` in `zone`; null for an empty list. `byHour`: the last 48 hours' chart. */
export function summarize(
  { totals, hours, domains }: CountsRead,
  now: Date,
  zone: string,
  { byHour = false } = {},
): Summary | null {
  if (totals.sign_ups === 0 || totals.first_at === null) return null;
  const window = chartWindow(now, zone, new Date(totals.first_at));
  const days = foldIntoDays(hours, window.days, zone);
  const recent = recentTotals(days, window.days.at(-1)!);
  const { marked, byReason } = markedTotals(totals.marked, domains, markDomains(domains));
  const chart = byHour
    ? {
        title: `Sign-ups per hour, the last ${CHART_HOURS} hours`,
        rows: lastHours(hours, now, zone).map(({ day, time, weekday, sign_ups }) => ({
          label: `${weekday} ${day} ${time}`,
          shortLabel: `${weekday} ${time}`,
          value: sign_ups,
        })),
      }
    : {
        title:
          days.length < CHART_DAYS
            ? `Sign-ups per day since the first, ${days[0]!.day}`
            : `Sign-ups per day, the last ${CHART_DAYS} days`,
        rows: days.map(({ day, weekday, sign_ups }) => ({
          label: `${weekday} ${day}`,
          shortLabel: day.slice(5),
          value: sign_ups,
        })),
      };
  return {
    signUps: totals.sign_ups,
    today: recent.today,
    lastWeek: recent.lastWeek,
    withPhone: totals.with_phone,
    marked,
    byReason,
    zone,
    chart,
  };
}
