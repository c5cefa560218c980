// The launch instant, as the content file gives it, and everything the pages say about it.

/** What the pages, the calendar event and the social image say about the launch. */
export interface Launch {
  /** ISO 8601 in UTC, without milliseconds: "2028-01-01T00:00:00Z". Plain text, for islands. */
  at: string;
  /** The year in UTC: "2028". */
  year: string;
  /** The instant in UTC, as a visitor reads it: "January 1, 2028, 00:00 UTC". */
  utc: string;
}

// A date and a time with its offset; seconds and fractions optional.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * The launch as written in the content file: YAML reads an unquoted 2028-01-01T00:00:00Z (or a
 * bare date, as midnight UTC) as a date, and a quoted one as text, which must then name its
 * offset. Anything else is null.
 */
export function parseInstant(value: unknown): Date | null {
  const instant =
    value instanceof Date
      ? value
      : typeof value === "string" && ISO_INSTANT.test(value)
        ? new Date(value)
        : null;
  return instant && !Number.isNaN(instant.getTime()) ? instant : null;
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
