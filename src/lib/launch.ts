// The launch instant, as the content file gives it, and everything the pages say about it.
import { calendarDay } from "./calendar-day";

/** What the pages, the calendar event and the social image say about the launch. */
export interface Launch {
  /** ISO 8601 in UTC, "2028-01-01T00:00:00Z" (milliseconds only when there are any): text, for islands. */
  at: string;
  /** The year in UTC: "2028". */
  year: string;
  /** The instant in UTC, as a visitor reads it: "January 1, 2028, 00:00 UTC". */
  utc: string;
}

// A date and a time of day with its offset (Z for UTC); seconds and their fraction optional.
const ISO_INSTANT =
  /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-](0\d|1[0-4]):[0-5]\d)$/;

/**
 * The launch as written in the content file, "2028-01-01T00:00:00Z": an ISO 8601 date and time
 * with its offset, on a day the calendar has (JavaScript would read February 30 as March 1).
 * Anything else is null.
 */
export function parseInstant(value: unknown): Date | null {
  const match = typeof value === "string" ? ISO_INSTANT.exec(value) : null;
  if (!match || !calendarDay(match[1]!)) return null;
  return new Date(value as string);
}

const UTC_DATE = new Intl.DateTimeFormat("en-US", {
  timeZone: "UTC",
  year: "numeric",
  month: "long",
  day: "numeric",
});
const UTC_TIME = new Intl.DateTimeFormat("en-US", {
  timeZone: "UTC",
  hour: "2-digit",
  minute: "2-digit",
  hourCycle: "h23",
});

export function describeLaunch(instant: Date): Launch {
  return {
    at: instant.toISOString().replace(/\.000Z$/, "Z"),
    year: String(instant.getUTCFullYear()),
    utc: `${UTC_DATE.format(instant)}, ${UTC_TIME.format(instant)} UTC`,
  };
}
