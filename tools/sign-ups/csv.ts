// The export's CSV: RFC 4180 (every field quoted, `"` doubled, CRLF line ends), UTF-8, a header
// row, and safe to open in a spreadsheet (OWASP's CSV injection guidance).
import { stringify, type Stringifier } from "csv-stringify";

/** `source` and `review` are empty but for a sign-up marked past a normal pace. */
export const CSV_COLUMNS = ["email", "phone", "created_at", "source", "review"] as const;

export type CsvRecord = Record<(typeof CSV_COLUMNS)[number], string | null>;

/**
 * What makes a spreadsheet read a cell as a formula (`=HYPERLINK(…)`, `+1+1`, `@SUM(…)`) or
 * shift it into one: OWASP's list (= + - @, tab, carriage return), a line feed and NUL as
 * ASVS adds, and the full-width forms some spreadsheets take for the same.
 */
const FORMULA_START = /^[=+\-@\t\r\n\0＝＋－＠]/u;

/** A cell a spreadsheet shows as the text it is: one that could start a formula gets a leading `'`. */
export function neutralizeCell(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/**
 * Every field in quotes, so that no spreadsheet splits a phone such as `1;2` on its own list
 * separator either; an absent phone, source or review is an empty field. `bom` helps Excel see UTF-8.
 */
export function csvWriter({ bom = false } = {}): Stringifier {
  return stringify({
    header: true,
    columns: [...CSV_COLUMNS],
    quoted: true,
    record_delimiter: "windows",
    bom,
    cast: { string: neutralizeCell },
  });
}

/**
 * A mailing tool's import file (mailing-tools.ts): its columns, RFC 4180 (quotes only where a
 * field needs them), UTF-8. No `'` before a cell that starts with `+` or `-`: a tool reads the
 * phone `+33612345678` as it is, and would keep the `'`.
 */
export function toolCsvWriter(columns: readonly string[], { bom = false } = {}): Stringifier {
  return stringify({ header: true, columns: [...columns], record_delimiter: "windows", bom });
}

/**
 * A timestamp as PostgREST writes it (`2026-11-22T01:31:17.336123+00:00`, in the database's
 * time zone) in ISO 8601 UTC, `2026-11-22T01:31:17.336123Z`, every digit of its fraction kept.
 */
export function toUtcIso(timestamp: string): string {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/.exec(timestamp);
  if (!match) throw new Error(`Not a timestamp with a time zone: ${JSON.stringify(timestamp)}`);
  const [, seconds, fraction = "", zone] = match;
  return `${new Date(`${seconds}${zone}`).toISOString().slice(0, 19)}${fraction}Z`;
}
