// The part of PostgREST (v14) the site and its tests use: /<table> with GET and HEAD, POST,
// PATCH and DELETE, answered with PostgREST's statuses, headers and bodies. The database, not
// this code, decides what each role may do: it only translates HTTP to SQL and back.
import { fromPostgresError, isPostgresError, postgrestError } from "./errors.ts";
import type { Identity } from "./gateway.ts";
import { JSON_CONTENT_TYPE, ResponseError, type HttpResponse } from "./http-response.ts";
import { parsePayload } from "./payload.ts";
import { notImplemented, parseQueryParams } from "./query-params.ts";
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

type ReturnPreference = "representation" | "minimal" | null;

type RawStatementResult = Omit<StatementResult, "page_total"> & { page_total: number | string };

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
        // A count is a bigint, which drivers may hand over as text.
        return { page_total: Number(rows[0]!.page_total), body: rows[0]!.body };
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
  const preference = returnPreference(headers.prefer);
  const selection: Selection = preference === "representation" ? params.select : null;
  const payload = () => parsePayload(request.body, headers["content-type"], table, columns, params.columns);
  // Inserts and deletes report no row range, updates do (Response.hs).
  const mutationAnswer =
    (status: number, contentRange: (rows: number) => string) =>
    ({ page_total, body }: StatementResult) =>
      mutationResponse(status, contentRange(page_total), preference, body, profileHeader);

  switch (method) {
    case "GET":
    case "HEAD":
      return {
        statement: readStatement(table, params.select, params.filters),
        respond: ({ page_total, body }) => ({
          status: 200,
          headers: {
            "Content-Range": rowRange(page_total),
            "Content-Type": JSON_CONTENT_TYPE,
            ...profileHeader,
          },
          body,
        }),
      };
    case "POST":
      return {
        statement: insertStatement(table, payload(), selection),
        respond: mutationAnswer(201, () => "*/*"),
      };
    case "PATCH": {
      // The body is read first, as PostgREST reads it before any SQL runs.
      const changes = payload();
      requireFilter("UPDATE", params.filters);
      return {
        statement: updateStatement(table, changes, params.filters, selection),
        respond: mutationAnswer(selection ? 200 : 204, rowRange),
      };
    }
    case "DELETE":
      requireFilter("DELETE", params.filters);
      return {
        statement: deleteStatement(table, params.filters, selection),
        respond: mutationAnswer(selection ? 200 : 204, () => "*/*"),
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
function requireFilter(command: "UPDATE" | "DELETE", filters: unknown[]): void {
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

/** `Prefer: return=...`; other preferences are ignored, except those that would change the outcome. */
function returnPreference(prefer: string | undefined): ReturnPreference {
  const preferences = (prefer ?? "").split(",").map((item) => item.trim());
  if (preferences.some((item) => item.startsWith("resolution=")))
    throw notImplemented("Upsert (Prefer: resolution) is");
  if (preferences.includes("return=representation")) return "representation";
  return preferences.includes("return=minimal") ? "minimal" : null;
}

function mutationResponse(
  status: number,
  contentRange: string,
  preference: ReturnPreference,
  body: string,
  profileHeader: Record<string, string>,
): HttpResponse {
  const headers: Record<string, string> = { "Content-Range": contentRange };
  if (preference) headers["Preference-Applied"] = `return=${preference}`;
  if (preference !== "representation") return { status, headers, body: "" };
  return { status, headers: { ...headers, "Content-Type": JSON_CONTENT_TYPE, ...profileHeader }, body };
}

/** PostgREST's Content-Range for the rows of an answer: `0-2/*`, or `*\/*` for none. */
function rowRange(rows: number): string {
  return rows > 0 ? `0-${rows - 1}/*` : "*/*";
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
