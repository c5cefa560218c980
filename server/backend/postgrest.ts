// The part of PostgREST (v14) the site and its tests use: /<table> with GET and HEAD, POST,
// PATCH and DELETE, answered with PostgREST's statuses, headers and bodies. The database, not
// this code, decides what each role may do: it only translates HTTP to SQL and back.
import { fromPostgresError, isPostgresError, postgrestError } from "./errors.ts";
import type { Identity } from "./gateway.ts";
import { ResponseError, type HttpResponse } from "./http-response.ts";
import { CONTENT_TYPES, negotiateFormat, type OutputFormat } from "./media-types.ts";
import { parsePayload } from "./payload.ts";
import { parsePreferences, preferenceApplied, type Preferences } from "./preferences.ts";
import { notImplemented, parseQueryParams, type Filter } from "./query-params.ts";
import { contentRange, readRangeAnswer, requestedRange, withMaxRows } from "./ranges.ts";
import type { RequestContext, RequestRunner } from "./request-transaction.ts";
import { EXPOSED_SCHEMA, type SchemaCache } from "./schema-cache.ts";
import {
  deleteStatement,
  insertStatement,
  readStatement,
  updateStatement,
  type Selection,
  type Statement,
  type StatementResult,
} from "./sql.ts";

/**
 * The most rows a read returns, whatever it asks for: Supabase's default "Max rows" (PostgREST's
 * db-max-rows), as supabase/config.toml sets it for the CLI's stack.
 */
export const MAX_ROWS = 1000;

export interface RestRequest {
  method: string;
  /** The path after /rest/v1, as PostgREST sees it: `/early_access`. */
  path: string;
  query: URLSearchParams;
  /** Lower-cased names. */
  headers: Record<string, string>;
  /** As received: whether it is text, and in which encoding, is for the payload to decide. */
  body: Uint8Array;
  identity: Identity;
}

export type RestHandler = (request: RestRequest) => Promise<HttpResponse>;

/** A count is a bigint, which drivers may hand over as text. */
type RawStatementResult = Omit<StatementResult, "page_total" | "total_result_set"> & {
  page_total: number | string;
  total_result_set: number | string | null;
};

/** How a request's answer is shaped once its statement has run. */
interface Plan {
  statement: Statement;
  respond: (result: StatementResult) => HttpResponse;
}

export function createRestHandler(cache: SchemaCache, runRequest: RequestRunner): RestHandler {
  return async (request) => {
    try {
      const plan = planRequest(request, cache);
      const result = await runRequest(requestContext(request), async (db) => {
        const { rows } = await db.query<RawStatementResult>(plan.statement.text, plan.statement.params);
        const { page_total, total_result_set, body } = rows[0]!;
        return {
          page_total: Number(page_total),
          total_result_set: total_result_set === null ? null : Number(total_result_set),
          body,
        };
      });
      return plan.respond(result);
    } catch (error) {
      if (error instanceof ResponseError) return error.response;
      if (isPostgresError(error)) return fromPostgresError(error, request.identity.role).response;
      throw error;
    }
  };
}

function planRequest(request: RestRequest, cache: SchemaCache): Plan {
  const { method, headers } = request;
  const profileHeader = negotiateSchema(method, headers);
  const table = tableName(request.path);
  const columns = cache.tables.get(table);
  if (!columns) {
    throw postgrestError(
      404,
      "PGRST205",
      `Could not find the table '${EXPOSED_SCHEMA}.${table}' in the schema cache`,
    );
  }
  const params = parseQueryParams(request.query);
  const preferences = parsePreferences(headers.prefer);
  const format = negotiateFormat(headers.accept);
  const selection: Selection =
    preferences.return === "representation" ? { columns: params.select, format } : null;
  const payload = () => parsePayload(request.body, headers["content-type"], table, columns, params.columns);
  const written = (status: number, contentRange: (rows: number) => string) => ({
    respond: (result: StatementResult) =>
      writeResponse(status, contentRange(result.page_total), preferences, format, result.body, profileHeader),
  });
  // Inserts and deletes report no row range, updates do (Response.hs); a count is the rows written.
  const total = (rows: number) => (preferences.countExact ? rows : null);
  const noRowRange = (rows: number) => contentRange(1, 0, total(rows));
  const rowRange = (rows: number) => contentRange(0, rows - 1, total(rows));

  switch (method) {
    case "GET":
    case "HEAD": {
      const range = requestedRange({
        method,
        limit: params.limit,
        offset: params.offset,
        rangeHeader: headers.range,
      });
      return {
        statement: readStatement({
          table,
          selection: params.select,
          filters: params.filters,
          order: params.order,
          range: withMaxRows(range, MAX_ROWS),
          count: preferences.countExact,
          format: method === "HEAD" ? "none" : format,
        }),
        respond: ({ page_total, total_result_set, body }) => {
          const answer = readRangeAnswer(range, page_total, total_result_set);
          return {
            status: answer.status,
            headers: {
              "Content-Range": answer.contentRange,
              "Content-Type": CONTENT_TYPES[format],
              ...profileHeader,
              ...preferenceApplied(preferences, false),
            },
            body: answer.errorBody ?? body,
          };
        },
      };
    }
    case "POST":
      return { statement: insertStatement(table, payload(), selection), ...written(201, noRowRange) };
    case "PATCH": {
      // The body is read first, as PostgREST reads it before any SQL runs.
      const changes = payload();
      requireFilter("UPDATE", params.filters);
      return {
        statement: updateStatement(table, changes, params.filters, selection),
        ...written(selection ? 200 : 204, rowRange),
      };
    }
    case "DELETE":
      requireFilter("DELETE", params.filters);
      return {
        statement: deleteStatement(table, params.filters, selection),
        ...written(selection ? 200 : 204, noRowRange),
      };
    case "PUT":
      throw notImplemented("PUT (upsert by primary key) is");
    default:
      throw postgrestError(405, "PGRST117", `Unsupported HTTP method: ${method}`);
  }
}

/**
 * Supabase loads pg-safeupdate for PostgREST's connections: an UPDATE or DELETE without a WHERE
 * clause fails before it runs, whoever asks (PostgREST answers 400 for that one 21000).
 */
function requireFilter(command: "UPDATE" | "DELETE", filters: Filter[]): void {
  if (filters.length === 0) throw postgrestError(400, "21000", `${command} requires a WHERE clause`);
}

/**
 * Only `public` is exposed. A request that names its schema (Accept-Profile to read,
 * Content-Profile to write) gets it confirmed in the answer.
 */
function negotiateSchema(method: string, headers: Record<string, string>): Record<string, string> {
  const schema =
    method === "GET" || method === "HEAD" ? headers["accept-profile"] : headers["content-profile"];
  if (schema === undefined) return {};
  if (schema !== EXPOSED_SCHEMA) {
    throw postgrestError(406, "PGRST106", `Invalid schema: ${schema}`, {
      hint: `Only the following schemas are exposed: ${EXPOSED_SCHEMA}`,
    });
  }
  return { "Content-Profile": EXPOSED_SCHEMA };
}

function tableName(path: string): string {
  const segments = path.split("/").slice(1);
  if (segments[0] === "" || segments[0] === "rpc") throw notImplemented("The schema root and /rpc are");
  if (segments.length !== 1) throw postgrestError(404, "PGRST125", "Invalid path specified in request URL");
  try {
    return decodeURIComponent(segments[0]!);
  } catch {
    throw postgrestError(404, "PGRST125", "Invalid path specified in request URL");
  }
}

function writeResponse(
  status: number,
  contentRange: string,
  preferences: Preferences,
  format: OutputFormat,
  body: string,
  profileHeader: Record<string, string>,
): HttpResponse {
  const headers = { "Content-Range": contentRange, ...preferenceApplied(preferences, true) };
  if (preferences.return !== "representation") return { status, headers, body: "" };
  return { status, headers: { ...headers, "Content-Type": CONTENT_TYPES[format], ...profileHeader }, body };
}

/** The request as PostgREST hands it to the database: headers without the cookie, cookies apart. */
function requestContext({ method, path, headers, identity }: RestRequest): RequestContext {
  const { cookie, ...otherHeaders } = headers;
  return { ...identity, method, path, headers: otherHeaders, cookies: parseCookies(cookie) };
}

function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const pair of header?.split(";") ?? []) {
    const equals = pair.indexOf("=");
    if (equals > 0) cookies[pair.slice(0, equals).trim()] = pair.slice(equals + 1).trim();
  }
  return cookies;
}
