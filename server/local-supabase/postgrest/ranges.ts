// Which rows of a read an answer holds, as PostgREST works it out (RangeQuery.hs, and
// getRanges in ApiRequest.hs): `limit` and `offset` in the query string, the `Range: 0-24`
// header on GET, the server's max rows; then the Content-Range and status of the answer.
// Ranges are inclusive row indexes; an upper bound of Infinity means "to the end".
import { postgrestError } from "./errors.ts";
import type { ResponseError } from "../http-response.ts";

export interface Range {
  lower: number;
  upper: number;
}

export const ALL_ROWS: Range = { lower: 0, upper: Infinity };

/** What an intersection with an empty range gives: empty, and unlike limit=0's range. */
const EMPTY: Range = { lower: Infinity, upper: -Infinity };

/** `limit=0`, which PostgREST lets through although the range is empty (its issue #1121). */
const LIMIT_ZERO: Range = { lower: 0, upper: -1 };

const isEmpty = (range: Range) => range.upper < range.lower;

const hasLimitZero = (range: Range) => range.upper === LIMIT_ZERO.upper;

const sameRange = (a: Range, b: Range) =>
  (isEmpty(a) && isEmpty(b)) || (a.lower === b.lower && a.upper === b.upper);

function intersect(a: Range, b: Range): Range {
  if (isEmpty(a) || isEmpty(b)) return EMPTY;
  return { lower: Math.max(a.lower, b.lower), upper: Math.min(a.upper, b.upper) };
}

/** How many rows the range allows; null when it has no end. */
export function rangeLimit({ lower, upper }: Range): number | null {
  return Number.isFinite(lower) && Number.isFinite(upper) ? 1 + upper - lower : null;
}

/** The range cut to `limit` rows from its start (restrictRange). */
function restrict(range: Range, limit: number | null): Range {
  return limit === null ? range : intersect(range, { lower: -Infinity, upper: range.lower + limit - 1 });
}

/** Haskell's `readMaybe` for an Integer: optional minus, digits, spaces around. */
function readInteger(text: string): number | null {
  return /^\s*-?\d+\s*$/.test(text) ? Number(text) : null;
}

/** `Range: 10-19` or `Range: 10-`; anything else asks for every row. */
function parseRangeHeader(header: string | undefined): Range {
  const match = /^(\d+)-(\d*)$/.exec(header ?? "");
  if (!match) return ALL_ROWS;
  const upper = match[2] === "" ? Infinity : Number(match[2]);
  return intersect({ lower: Number(match[1]), upper: Infinity }, { lower: -Infinity, upper });
}

/** `limit` and `offset` from the query string, as PostgREST reads them; null when neither is given. */
function queryRange(limit: string | null, offset: string | null): Range | null {
  const limitRange = limit === null ? null : restrict(ALL_ROWS, readInteger(limit));
  const offsetValue = offset === null ? null : readInteger(offset);
  const offsetRange =
    offset === null ? null : offsetValue === null ? ALL_ROWS : { ...ALL_ROWS, lower: offsetValue };
  if (limitRange && offsetRange) {
    const start = offsetRange.lower;
    return { lower: start, upper: start + (rangeLimit(limitRange) ?? 0) - 1 };
  }
  return limitRange ?? offsetRange;
}

export interface RangeRequest {
  method: string;
  limit: string | null;
  offset: string | null;
  /** The `Range` header, which only GET honours (RFC 9110). */
  rangeHeader: string | undefined;
}

/** The rows the client asked for; 416 when that range cannot hold any. */
export function requestedRange({ method, limit, offset, rangeHeader }: RangeRequest): Range {
  const header = method === "GET" ? parseRangeHeader(rangeHeader) : ALL_ROWS;
  const limits = queryRange(limit, offset) ?? ALL_ROWS;
  const range = hasLimitZero(limits) ? LIMIT_ZERO : intersect(header, limits);
  if (isEmpty(range) && !hasLimitZero(limits)) {
    throw rangeNotSatisfiable(
      isEmpty(header)
        ? "The lower boundary must be lower than or equal to the upper boundary in the Range header."
        : "Limit should be greater than or equal to zero.",
    );
  }
  return range;
}

/** The range a read runs with: at most `maxRows` rows, as the server's db-max-rows says. */
export function withMaxRows(range: Range, maxRows: number): Range {
  return hasLimitZero(range) ? range : restrict(range, maxRows);
}

/** `LIMIT $n OFFSET $m` for a range (limitOffsetF); nothing for every row. */
export function limitOffset(range: Range, params: string[]): string {
  if (sameRange(range, ALL_ROWS)) return "";
  const limit = rangeLimit(range);
  params.push(String(range.lower));
  const offset = `$${params.length}`;
  if (limit === null) return ` LIMIT ALL OFFSET ${offset}`;
  params.push(String(limit));
  return ` LIMIT $${params.length} OFFSET ${offset}`;
}

/** PostgREST's Content-Range (contentRangeH): `0-24/1234`, `*\/0`, `10-14/*`. */
export function contentRange(lower: number, upper: number, total: number | null): string {
  const rows = total !== 0 && lower <= upper ? `${lower}-${upper}` : "*";
  return `${rows}/${total ?? "*"}`;
}

export interface ReadRangeAnswer {
  status: number;
  contentRange: string;
  /** For a 416, the error body that replaces the rows (with the read's own headers). */
  errorBody?: string;
}

/**
 * The status and Content-Range of a read (rangeStatusHeader): 206 when a count shows rows left
 * out, 416 when the offset lies past them all.
 */
export function readRangeAnswer(range: Range, pageTotal: number, total: number | null): ReadRangeAnswer {
  const lower = range.lower;
  const upper = lower + pageTotal - 1;
  const answer = { status: 200, contentRange: contentRange(lower, upper, total) };
  if (total === null) return answer;
  if (lower > total) {
    const details = `An offset of ${lower} was requested, but there are only ${total} rows.`;
    return { ...answer, status: 416, errorBody: rangeNotSatisfiable(details).response.body };
  }
  return 1 + upper - lower < total ? { ...answer, status: 206 } : answer;
}

function rangeNotSatisfiable(details: string): ResponseError {
  return postgrestError(416, "PGRST103", "Requested range not satisfiable", { details });
}
