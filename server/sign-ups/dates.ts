// Days and times as the owner means them: in the time zone of the machine the command runs on.

const DAY_MS = 24 * 60 * 60 * 1000;

/** Midnight that began the day of `now`, in local time. */
export function startOfDay(now: Date): Date {
  return new Date(now.getFullYear(), now.getMonth(), now.getDate());
}

/** The instant seven times 24 hours before `now`. */
export function weekBefore(now: Date): Date {
  return new Date(now.getTime() - 7 * DAY_MS);
}

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
  const day = /^(\d{4})-(\d\d)-(\d\d)$/.exec(text.trim());
  if (day) {
    const [year, month, date] = day.slice(1).map(Number) as [number, number, number];
    const midnight = new Date(year, month - 1, date);
    return midnight.getMonth() === month - 1 && midnight.getDate() === date ? midnight : null;
  }
  const dateTime = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d(?::\d\d(?:\.\d+)?)?)(Z|[+-]\d\d:\d\d)?$/i.exec(
    text.trim(),
  );
  if (!dateTime) return null;
  const [, date, time, zone = ""] = dateTime;
  const parsed = new Date(`${date}T${time}${zone.toUpperCase()}`);
  // Date rolls an impossible day or hour over into the next; the text must read back the same.
  if (Number.isNaN(parsed.getTime()) || !readsBack(parsed, date!, time!, zone)) return null;
  return parsed;
}

function readsBack(parsed: Date, date: string, time: string, zone: string): boolean {
  if (zone !== "") return true;
  return formatLocal(parsed) === `${date} ${time.slice(0, 5)}`;
}
