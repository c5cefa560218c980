// An iCalendar file (RFC 5545) holding one event: what "Add to calendar" downloads. Pure text;
// src/pages/launch.ics.ts writes it into the build.

export interface CalendarEvent {
  /** Stable and globally unique, so that a calendar knows a second import for the same event. */
  uid: string;
  /** When the event was last changed (DTSTAMP), as an ISO 8601 instant. */
  stamp: string;
  /** When it starts, as an ISO 8601 instant. */
  start: string;
  summary: string;
  description: string;
  url: string;
}

const CRLF = "\r\n";
const LINE_OCTETS = 75;

/** RFC 5545 §3.3.5, a UTC date-time: 2028-01-01T00:00:00Z → 20280101T000000Z. */
export function utcDateTime(iso: string): string {
  const instant = new Date(iso);
  if (Number.isNaN(instant.getTime())) throw new RangeError(`Not an ISO 8601 instant: ${iso}`);
  return instant
    .toISOString()
    .replace(/\.\d{3}Z$/, "Z")
    .replace(/[-:]/g, "");
}

/** RFC 5545 §3.3.11, a TEXT value: backslash, semicolon and comma escaped, line breaks as \n. */
export function escapeText(text: string): string {
  return text.replace(/[\\;,]/g, (char) => `\\${char}`).replace(/\r\n|\r|\n/g, "\\n");
}

/** Octets of one code point in UTF-8. */
function utf8Octets(char: string): number {
  const codePoint = char.codePointAt(0)!;
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/**
 * RFC 5545 §3.1: a line longer than 75 octets continues on lines that begin with a space (which
 * counts towards their 75), never splitting a UTF-8 character.
 */
export function foldLine(line: string): string {
  const lines: string[] = [];
  let current = "";
  let octets = 0;
  for (const char of line) {
    const size = utf8Octets(char);
    const limit = lines.length === 0 ? LINE_OCTETS : LINE_OCTETS - 1;
    if (octets + size > limit) {
      lines.push(current);
      current = "";
      octets = 0;
    }
    current += char;
    octets += size;
  }
  lines.push(current);
  return lines.join(`${CRLF} `);
}

/** A VCALENDAR with the one VEVENT, CRLF line endings throughout. */
export function calendarFile(event: CalendarEvent, productId: string): string {
  const lines = [
    "BEGIN:VCALENDAR",
    "VERSION:2.0",
    `PRODID:${escapeText(productId)}`,
    "CALSCALE:GREGORIAN",
    "METHOD:PUBLISH",
    "BEGIN:VEVENT",
    `UID:${escapeText(event.uid)}`,
    `DTSTAMP:${utcDateTime(event.stamp)}`,
    `DTSTART:${utcDateTime(event.start)}`,
    `SUMMARY:${escapeText(event.summary)}`,
    `DESCRIPTION:${escapeText(event.description)}`,
    `URL:${event.url}`,
    "END:VEVENT",
    "END:VCALENDAR",
  ];
  return lines.map(foldLine).join(CRLF) + CRLF;
}
