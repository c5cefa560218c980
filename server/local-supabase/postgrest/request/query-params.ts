// The query string of a REST request, as far as the local backend implements PostgREST's
// (ApiRequest/QueryParams.hs): `select`, `columns`, `order`, `limit` and `offset`, and
// `eq` and `gte` filters. Everything else is refused with PostgREST's "not
// implemented" error rather than silently ignored.
import { postgrestError } from "../errors.ts";
import type { ResponseError } from "../../http-response.ts";

/** The comparison operators this repository's requests use (PostgREST has more), and their SQL. */
export const OPERATORS = { eq: "=", gte: ">=" } as const;

export type Operator = keyof typeof OPERATORS;

/** `column=op.value` in the query string. */
export interface Filter {
  column: string;
  operator: Operator;
  value: string;
}

/** One term of `order=`: `created_at.desc.nullslast`. */
export interface OrderTerm {
  column: string;
  direction: "asc" | "desc" | null;
  nulls: "nullsfirst" | "nullslast" | null;
}

export interface QueryParams {
  /** Columns to return; `*` when the request names none. */
  select: string[];
  /** The columns an insert sets, instead of the body's keys. */
  columns: string[] | null;
  filters: Filter[];
  order: OrderTerm[];
  /** As written; what they mean is for ranges.ts. */
  limit: string | null;
  offset: string | null;
}

/** Parameters that are not filters. */
const RESERVED_PARAMS = new Set(["select", "columns", "order", "limit", "offset"]);

/** Parameters with a PostgREST meaning that the local backend does not implement. */
const UNSUPPORTED_PARAMS = new Set(["on_conflict", "and", "or"]);

/** PostgREST syntax beyond a plain column name: embedding, aliases, casts, JSON paths. */
const BEYOND_PLAIN_NAME = /[(),:!."\0]|->/;

/** `count()`, `amount.sum()`…: aggregates, which Supabase leaves disabled (db-aggregates-enabled). */
const AGGREGATE = /(?:^|\.)(?:count|sum|avg|max|min)\(\)(?:::\w+)?$/;

export function parseQueryParams(query: URLSearchParams): QueryParams {
  const filters: Filter[] = [];
  for (const [key, value] of query) {
    if (RESERVED_PARAMS.has(key)) continue;
    if (UNSUPPORTED_PARAMS.has(key)) throw notImplemented(`The '${key}' query parameter is`);
    filters.push(parseFilter(key, value));
  }
  const select = query.get("select");
  const columns = query.get("columns");
  const order = query.get("order");
  return {
    select: select === null ? ["*"] : parseSelect(select),
    columns: columns === null ? null : splitNames(columns),
    filters,
    order: order === null ? [] : parseOrder(order),
    limit: query.get("limit"),
    offset: query.get("offset"),
  };
}

function parseFilter(key: string, value: string): Filter {
  const dot = value.indexOf(".");
  const operator = value.slice(0, dot);
  if (dot > 0 && Object.hasOwn(OPERATORS, operator)) {
    return { column: columnName(key), operator: operator as Operator, value: value.slice(dot + 1) };
  }
  throw notImplemented(`The filter '${key}=${value}' is: only eq and gte filters are`);
}

function parseSelect(list: string): string[] {
  const items = list.trim() === "" ? [] : list.split(",");
  if (items.some((item) => AGGREGATE.test(item.trim()))) {
    throw postgrestError(400, "PGRST123", "Use of aggregate functions is not allowed");
  }
  return items.map((item) => (item.trim() === "*" ? "*" : columnName(item)));
}

function splitNames(list: string): string[] {
  return list.trim() === "" ? [] : list.split(",").map(columnName);
}

/** `a,b.desc,c.asc.nullsfirst` (pOrder); a term PostgREST cannot parse is refused as it refuses it. */
function parseOrder(list: string): OrderTerm[] {
  return list.split(",").map((term) => {
    const match = /^\s*("[^"]*"|[^.,"]+)(?:\.(asc|desc))?(?:\.(nullsfirst|nullslast))?\s*$/.exec(term);
    if (!match) {
      throw postgrestError(400, "PGRST100", `"failed to parse order (${list})"`, {
        details: `unexpected '${term}' expecting a column, then .asc or .desc, then .nullsfirst or .nullslast`,
      });
    }
    const [, column = "", direction, nulls] = match;
    return {
      column: columnName(column),
      direction: (direction ?? null) as OrderTerm["direction"],
      nulls: (nulls ?? null) as OrderTerm["nulls"],
    };
  });
}

/** A column name, plain or double-quoted as supabase-js quotes `columns`. */
function columnName(raw: string): string {
  const name = raw.trim().replace(/^"(.*)"$/, "$1");
  if (name === "" || BEYOND_PLAIN_NAME.test(name)) throw notImplemented(`The column reference '${raw}' is`);
  return name;
}

export function notImplemented(what: string): ResponseError {
  return postgrestError(400, "PGRST127", "Feature not implemented", {
    details: `${what} not supported by the local backend`,
  });
}
