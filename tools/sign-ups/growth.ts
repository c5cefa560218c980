// How the list grew, in the owner's time zone: the database counts sign-ups per UTC hour and
// per quarter of it (supabase/schemas/40_sign_ups_by_hour.sql); here the quarters are added up
// into local days and hours, exactly in any zone (every zone is a whole number of quarter hours
// from UTC: India's UTC+5:30, Nepal's UTC+5:45), and the window of the chart is chosen.

/** One UTC hour as the database counts it. */
export interface HourCount {
  /** The hour's first instant (`2026-11-22T13:00:00+00:00`). */
  starts_at: string;
  sign_ups: number;
  /** Its sign-ups from :00, :15, :30 and :45. */
  by_quarter: number[];
}

/** One bar of the chart: a local day, or a local hour. */
export interface Period {
  /** The local date, `YYYY-MM-DD`. */
  day: string;
  /** The local time it starts at, `HH:MM` (`00:00` for a day). */
  time: string;
  /** The weekday, `Mon`. */
  weekday: string;
  sign_ups: number;
}

/** How many days the chart shows at most, today included. */
export const CHART_DAYS = 30;

/** How many hours `--hours` shows, the current one included. */
export const CHART_HOURS = 48;

const QUARTER_MS = 15 * 60 * 1000;
const HOUR_MS = 4 * QUARTER_MS;

/** The furthest any zone is ahead of UTC (Kiribati's Line Islands, UTC+14). */
const LARGEST_OFFSET_MS = 14 * HOUR_MS;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The local date and time of an instant in a zone. */
function localParts(instant: Date, zone: string) {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      weekday: "short",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
    });
    formatters.set(zone, formatter);
  }
  const part = Object.fromEntries(formatter.formatToParts(instant).map(({ type, value }) => [type, value]));
  return {
    day: `${part.year}-${part.month}-${part.day}`,
    time: `${part.hour}:${part.minute}`,
    weekday: part.weekday!,
    minute: Number(part.minute),
  };
}

/** The local date of an instant, `YYYY-MM-DD`. */
export function localDay(instant: Date, zone: string): string {
  return localParts(instant, zone).day;
}

/** `YYYY-MM-DD` moved by whole calendar days. */
function addDays(day: string, days: number): string {
  const [year, month, date] = day.split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, date + days)).toISOString().slice(0, 10);
}

export interface Window {
  /** The local days the chart shows, oldest first: the last 30, or from the first sign-up's. */
  days: string[];
  /** Ask the database for the hours that start from here on: the first day's, whatever the zone. */
  since: Date;
}

/**
 * The days the chart shows at `now`, in `zone`, for a list whose first sign-up was at `firstAt`:
 * today at least. A first sign-up can be later than `now`, and on a later day: one stored after
 * the command read its clock (`watch`'s own probe, when the database's check is gone), or by a
 * database whose clock is ahead of this machine's.
 */
export function chartWindow(now: Date, zone: string, firstAt: Date): Window {
  const today = localDay(now, zone);
  const oldest = addDays(today, 1 - CHART_DAYS);
  const firstDay = localDay(firstAt, zone);
  const first = firstDay < oldest ? oldest : firstDay > today ? today : firstDay;
  const days: string[] = [];
  for (let day = first; day <= today; day = addDays(day, 1)) days.push(day);
  // A local day starts at the earliest 14 hours before the same date's UTC midnight, and the
  // 48 hours of --hours at the latest 48 hours before now.
  const [year, month, date] = first.split("-").map(Number) as [number, number, number];
  const hoursStart = Math.floor((now.getTime() - CHART_HOURS * HOUR_MS) / HOUR_MS) * HOUR_MS;
  return { days, since: new Date(Math.min(Date.UTC(year, month - 1, date) - LARGEST_OFFSET_MS, hoursStart)) };
}

/** Each quarter hour with sign-ups: its first instant (ms) and how many. */
function quarters(hours: HourCount[]): Array<[number, number]> {
  return hours.flatMap(({ starts_at, by_quarter }) => {
    const start = new Date(starts_at).getTime();
    return by_quarter.flatMap((count, index): Array<[number, number]> =>
      count > 0 ? [[start + index * QUARTER_MS, count]] : [],
    );
  });
}

/** The sign-ups added up per local day, for each of `days` (0 for a day without any). */
export function foldIntoDays(hours: HourCount[], days: string[], zone: string): Period[] {
  const perDay = new Map(days.map((day) => [day, 0]));
  for (const [start, count] of quarters(hours)) {
    const day = localDay(new Date(start), zone);
    const sum = perDay.get(day);
    if (sum !== undefined) perDay.set(day, sum + count);
  }
  return days.map((day) => {
    // Noon UTC of a date is that date in UTC: it names the date's weekday.
    const weekday = localParts(new Date(`${day}T12:00:00Z`), "UTC").weekday;
    return { day, time: "00:00", weekday, sign_ups: perDay.get(day)! };
  });
}

/** The first instant of the local hour that `instant` falls in. */
function localHourStart(instant: number, zone: string): number {
  const { minute } = localParts(new Date(instant), zone);
  return Math.floor(instant / 60_000) * 60_000 - minute * 60_000;
}

/**
 * The last 48 local hours up to `now`, the current one included, with their sign-ups (0 for an
 * hour without any). A clock change shows as a local hour skipped, or one shown twice.
 */
export function lastHours(hours: HourCount[], now: Date, zone: string): Period[] {
  const perHour = new Map<number, number>();
  for (const [start, count] of quarters(hours)) {
    const hour = localHourStart(start, zone);
    perHour.set(hour, (perHour.get(hour) ?? 0) + count);
  }
  const current = localHourStart(now.getTime(), zone);
  return Array.from({ length: CHART_HOURS }, (_, index) => {
    const start = current - (CHART_HOURS - 1 - index) * HOUR_MS;
    const { day, time, weekday } = localParts(new Date(start), zone);
    return { day, time, weekday, sign_ups: perHour.get(start) ?? 0 };
  });
}

/** Sign-ups today (since local midnight) and in the last 7 local days, today included. */
export function recentTotals(days: Period[], today: string): { today: number; lastWeek: number } {
  const weekStart = addDays(today, -6);
  const inWeek = days.filter(({ day }) => day >= weekStart && day <= today);
  return {
    today: days.find(({ day }) => day === today)?.sign_ups ?? 0,
    lastWeek: inWeek.reduce((sum, { sign_ups }) => sum + sign_ups, 0),
  };
}
