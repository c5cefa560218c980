// Whether a date names a day the calendar has: JavaScript's Date rolls 2026-02-30 over to March 2
// rather than refusing it. For the launch in the content file and the owner's `--since`.

export interface CalendarDay {
  year: number;
  month: number;
  day: number;
}

/** The parts of a `2026-11-01` that names a day of the calendar; null for one that does not. */
export function calendarDay(text: string): CalendarDay | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return null;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const utc = new Date(Date.UTC(year, month - 1, day));
  return utc.getUTCMonth() === month - 1 && utc.getUTCDate() === day ? { year, month, day } : null;
}
