// The launch as the visitor reads a time: in their own time zone and their browser's language.

const FORMAT: Intl.DateTimeFormatOptions = {
  weekday: "short",
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "numeric",
  minute: "2-digit",
  timeZoneName: "short",
};

/**
 * An instant in a time zone, with the zone's name: "Fri, Dec 31, 2027, 7:00 PM EST". Without
 * `locale` and `timeZone`, the browser's own.
 */
export function localDateTime(iso: string, locale?: string, timeZone?: string): string {
  return new Intl.DateTimeFormat(locale, { ...FORMAT, timeZone }).format(new Date(iso));
}
