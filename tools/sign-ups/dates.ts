// Days and times as the owner means them: in the time zone of the machine the command runs on.
import { calendarDay } from "../../src/lib/calendar-day.ts";

/** This machine's time zone, as the owner reads it (`Europe/Paris`, `UTC`). */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** `2026-11-22 14:03` in local time. */
export function formatLocal(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}`
  );
}

/**
 * `--since`: a day (`2026-11-01`, from its local midnight), or a day and a time, local unless
 * it names its zone (`2026-11-01T09:30`, `2026-11-01 09:30Z`, `2026-11-01T09:30:00+02:00`).
 * Null for anything else, an impossible date (2026-02-30) included.
 */
export function parseSince(text: string): Date | null {
  const trimmed = text.trim();
  if (/^\d{4}-\d\d-\d\d$/.test(trimmed)) {
    const day = calendarDay(trimmed);
    return day && new Date(day.year, day.month - 1, day.day);
  }
  const dateTime = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d(?::\d\d(?:\.\d+)?)?)(Z|[+-]\d\d:\d\d)?$/i.exec(trimmed);
  if (!dateTime) return null;
  const [, date, time, zone = ""] = dateTime;
  // Date rolls an impossible day over into the next month, whatever the zone.
  if (!calendarDay(date!)) return null;
  const parsed = new Date(`${date}T${time}${zone.toUpperCase()}`);
  // An impossible hour does not parse; a local time that a clock change skips would move.
  if (Number.isNaN(parsed.getTime())) return null;
  if (zone === "" && formatLocal(parsed) !== `${date} ${time!.slice(0, 5)}`) return null;
  return parsed;
}
