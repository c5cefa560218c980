// The query string of a REST request, as far as the embedded backend implements PostgREST's:
// `select`, `columns` and `column=eq.value` filters. Everything else is refused with
// PostgREST's "not implemented" error rather than silently ignored.
import { postgrestError } from "./errors.ts";
import type { ResponseError } from "./http-response.ts";
import type { Filter } from "./sql.ts";

export interface QueryParams {
  /** Columns to return; `*` when the request names none. */
  select: string[];
  /** The columns an insert or update sets, instead of the body's keys. */
  columns: string[] | null;
  filters: Filter[];
}

/** Parameters with a PostgREST meaning that the embedded backend does not implement. */
const UNSUPPORTED_PARAMS = new Set(["order", "limit", "offset", "on_conflict", "and", "or", "not"]);

/** PostgREST syntax beyond a plain column name: embedding, aliases, casts, JSON paths. */
const BEYOND_PLAIN_NAME = /[(),:!."\0]|->/;

export function parseQueryParams(query: URLSearchParams): QueryParams {
  const filters: Filter[] = [];
  for (const [key, value] of query) {
    if (key === "select" || key === "columns") continue;
    if (UNSUPPORTED_PARAMS.has(key)) throw notImplemented(`The '${key}' query parameter is`);
    if (!value.startsWith("eq."))
      throw notImplemented(`The filter '${key}=${value}' is: only eq. filters are`);
    filters.push({ column: columnName(key), value: value.slice("eq.".length) });
  }
  const select = query.get("select");
  const columns = query.get("columns");
  return {
    select: select === null ? ["*"] : splitNames(select, { allowStar: true }),
    columns: columns === null ? null : splitNames(columns, { allowStar: false }),
    filters,
  };
}

function splitNames(list: string, { allowStar }: { allowStar: boolean }): string[] {
  if (list.trim() === "") return [];
  return list.split(",").map((item) => (allowStar && item.trim() === "*" ? "*" : columnName(item)));
}

/** A column name, plain or double-quoted as supabase-js quotes `columns`. */
function columnName(raw: string): string {
  const name = raw.trim().replace(/^"(.*)"$/, "$1");
  if (name === "" || BEYOND_PLAIN_NAME.test(name)) throw notImplemented(`The column reference '${raw}' is`);
  return name;
}

export function notImplemented(what: string): ResponseError {
  return postgrestError(400, "PGRST127", "Feature not implemented", {
    details: `${what} not supported by the embedded backend`,
  });
}
