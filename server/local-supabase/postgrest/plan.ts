// The plan stage (PostgREST's Plan.hs, actionPlan): the request checked against the schema
// cache (the relation, the body's columns) and turned into the one statement that answers it.
// The requests this repository makes: a read (GET, or HEAD for a count), an insert (POST), a
// delete (DELETE with a filter).
import { postgrestError } from "./errors.ts";
import { readStatement, insertStatement, deleteStatement, type Statement } from "./query/statements.ts";
import { requestedRange, withMaxRows, type Range } from "./ranges.ts";
import type { ApiRequest } from "./request/api-request.ts";
import { parsePayload } from "./request/payload.ts";
import { notImplemented, type Filter } from "./request/query-params.ts";
import { EXPOSED_SCHEMA, type SchemaCache } from "./schema-cache.ts";

/**
 * The most rows a read returns, whatever it asks for: Supabase's default "Max rows" (PostgREST's
 * db-max-rows), as supabase/config.toml sets it for the CLI's stack.
 */
export const MAX_ROWS = 1000;

export type Plan =
  | { action: "read"; statement: Statement; range: Range }
  | { action: "insert" | "delete"; statement: Statement };

export function actionPlan(request: ApiRequest, cache: SchemaCache): Plan {
  const { method, relation, params, preferences, headers } = request;
  const columns = cache.tables.get(relation);
  if (!columns) {
    throw postgrestError(
      404,
      "PGRST205",
      `Could not find the table '${EXPOSED_SCHEMA}.${relation}' in the schema cache`,
    );
  }
  const returned = preferences.return === "representation" ? params.select : null;

  switch (method) {
    case "GET":
    case "HEAD": {
      const range = requestedRange({
        method,
        limit: params.limit,
        offset: params.offset,
        rangeHeader: headers.range,
      });
      const statement = readStatement({
        table: relation,
        selection: params.select,
        filters: params.filters,
        order: params.order,
        range: withMaxRows(range, MAX_ROWS),
        count: preferences.countExact,
        body: method === "GET",
      });
      return { action: "read", statement, range };
    }
    case "POST": {
      const payload = parsePayload(request.body, headers["content-type"], relation, columns, params.columns);
      return { action: "insert", statement: insertStatement(relation, payload, returned) };
    }
    case "DELETE":
      requireFilter(params.filters);
      return { action: "delete", statement: deleteStatement(relation, params.filters, returned) };
    case "PATCH":
    case "PUT":
      throw notImplemented(`${method} is`);
    default:
      throw postgrestError(405, "PGRST117", `Unsupported HTTP method: ${method}`);
  }
}

/**
 * Supabase loads pg-safeupdate for PostgREST's connections: a DELETE without a WHERE clause
 * fails before it runs, whoever asks (PostgREST answers 400 for that one 21000).
 */
function requireFilter(filters: Filter[]): void {
  if (filters.length === 0) throw postgrestError(400, "21000", "DELETE requires a WHERE clause");
}
