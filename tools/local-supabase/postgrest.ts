// The part of PostgREST (v14) this repository's requests use: a request checked against the schema
// cache, run as one statement in its own transaction as its role, answered with PostgREST's
// statuses, headers and bodies; anything else refused as not implemented (PGRST127). The
// database, not this code, decides what each role may do.
import type { Database, Queryable } from "./database/database.ts";
import {
  deleteStatement,
  EXPOSED_SCHEMA,
  insertStatement,
  preRequestStatement,
  readStatement,
  type Column,
  type Filter,
  type OrderTerm,
  type SelectItem,
  type Statement,
} from "./statements.ts";

export type HttpResponse = { status: number; headers: Record<string, string>; body: string };

/** A request as the gateway hands it on: the path after /rest/v1, lower-cased header names, a role. */
export interface RestRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: Uint8Array;
  role: string;
}

/** What the database reads of a request (PreQuery.hs). */
export type RequestContext = Pick<RestRequest, "method" | "path" | "headers" | "role">;

export interface Postgrest {
  handle(request: RestRequest): Promise<HttpResponse>;
  /** Runs `work` in the transaction PostgREST opens for such a request. */
  asRequest<T>(context: RequestContext, work: (tx: Queryable) => Promise<T>): Promise<T>;
}

/** Supabase's default "Max rows" (db-max-rows), as supabase/config.toml sets it. */
export const MAX_ROWS = 1000;

const JSON_TYPE = "application/json; charset=utf-8";
/** PostgREST's search path on Supabase: the exposed schema, then db-extra-search-path. */
const SEARCH_PATH = '"public", "extensions"';
/**
 * Each request's statements (its settings, the pre-request function, its own), prepared per
 * connection as PostgREST prepares them (db-prepared-statements): a request's values are all
 * parameters, so one text serves every request of its shape.
 */
const PREPARED = { prepared: true };

/** Reads the schema cache of `database` and answers requests over it. */
export async function createPostgrest(database: Database): Promise<Postgrest> {
  const { tables, roleSettings, preRequest } = await loadSchemaCache(database);

  const asRequest: Postgrest["asRequest"] = ({ method, path, headers, role }, work) =>
    database.transaction(
      async (tx) => {
        const settings = [
          ["search_path", SEARCH_PATH],
          // The role's own settings (anon's statement_timeout) come before the role itself;
          // Postgres refuses a role authenticator is no member of, and takes `none` as a reset.
          ...(roleSettings.get(role) ?? []).map(({ name, value }) => [name, value]),
          ["role", role],
          ["request.jwt.claims", JSON.stringify({ role })],
          ["request.method", method],
          ["request.path", path],
          ["request.headers", JSON.stringify(headers)],
        ];
        const calls = settings.map((_, index) => `set_config($${2 * index + 1}, $${2 * index + 2}, true)`);
        await tx.query(`select ${calls.join(", ")}`, settings.flat(), PREPARED);
        // The pre-request function: whatever it raises answers the request, whose statement is
        // then never planned.
        if (preRequest) await tx.query(preRequest, [], PREPARED);
        return work(tx);
      },
      { readOnly: method === "GET" },
    );

  async function answer(request: RestRequest): Promise<HttpResponse> {
    const { method, headers, query } = request;
    const profile = schemaProfile(headers[method === "GET" ? "accept-profile" : "content-profile"]);
    const table = tableName(request.path);
    const columns = tables.get(table);
    const unknown = `Could not find the table '${EXPOSED_SCHEMA}.${table}' in the schema cache`;
    if (!columns) throw postgrestError(404, "PGRST205", unknown);
    const { select, filters, order, limit, offset, columnsParam, onConflict } = parseQuery(query, method);
    const { count, ...prefer } = parsePrefer(headers.prefer);
    if (headers.range !== undefined) throw notImplemented("The Range header is");
    const returned = prefer.return === "representation" ? select : null;

    let statement: Statement;
    if (method === "GET") {
      const rows = Math.min(limit ?? MAX_ROWS, MAX_ROWS);
      statement = readStatement({ table, selection: select, filters, order, limit: rows, offset, count });
    } else if (method === "POST") {
      const type = headers["content-type"]?.split(";")[0]!.trim().toLowerCase() ?? "application/json";
      if (type !== "application/json") throw notImplemented(`A ${headers["content-type"]} body is`);
      const payload = readPayload(request.body, table, columns, columnsParam);
      // `?on_conflict=…` with `Prefer: resolution=ignore-duplicates`: rows whose columns match
      // a stored row's are skipped; with `merge-duplicates`, they update it (PostgREST takes the
      // primary key without on_conflict).
      if (prefer.resolution && !onConflict)
        throw notImplemented(`resolution=${prefer.resolution} without on_conflict is`);
      const conflict = prefer.resolution && {
        on: onConflict!,
        merge: prefer.resolution === "merge-duplicates",
      };
      statement = insertStatement(table, payload, returned, conflict);
    } else if (method === "DELETE") {
      // Supabase's pg-safeupdate refuses a DELETE without a WHERE clause, whoever asks.
      if (filters.length === 0) throw postgrestError(400, "21000", "DELETE requires a WHERE clause");
      statement = deleteStatement(table, filters, returned);
    } else {
      // PostgREST would plan it and call the pre-request function first: its refusal (the public
      // key's) is the answer; anyone it lets through gets this one's.
      return asRequest(request, () => Promise.reject(notImplemented(`${method} is`)));
    }
    type Result = Record<string, string | number | null>;
    const result = await asRequest(request, (tx) =>
      tx.query<Result>(statement.text, statement.params, PREPARED),
    );
    const { page_total, total_result_set } = result.rows[0]!;
    const pageTotal = Number(page_total);
    const total = total_result_set === null ? null : Number(total_result_set);
    const body = String(result.rows[0]!.body);
    const applied = [method !== "GET" && prefer.return && `return=${prefer.return}`, count && "count=exact"];
    const preference: Record<string, string> = applied.some(Boolean)
      ? { "Preference-Applied": applied.filter(Boolean).join(", ") }
      : {};

    if (method === "GET") {
      // 206 when a count shows rows left out, 416 when the offset lies past them all.
      const range = contentRange(offset, offset + pageTotal - 1, total);
      const headers = { "Content-Range": range, "Content-Type": JSON_TYPE, ...profile, ...preference };
      if (total !== null && offset > total) {
        const details = `An offset of ${offset} was requested, but there are only ${total} rows.`;
        const { body } = postgrestError(416, "PGRST103", "Requested range not satisfiable", details).response;
        return { status: 416, headers, body };
      }
      return { status: total !== null && pageTotal < total ? 206 : 200, headers, body };
    }
    // Writes report no row range; with count=exact, the total is the rows written.
    const written = { "Content-Range": contentRange(1, 0, count ? pageTotal : null), ...preference };
    if (!returned) return { status: method === "POST" ? 201 : 204, headers: written, body: "" };
    const headersWithBody = { ...written, "Content-Type": JSON_TYPE, ...profile };
    return { status: method === "POST" ? 201 : 200, headers: headersWithBody, body };
  }

  return {
    asRequest,
    handle: (request) =>
      answer(request).catch((error: unknown) => {
        if (error instanceof ResponseError) return error.response;
        if (isPostgresError(error)) return fromPostgresError(error, request.role).response;
        throw error;
      }),
  };
}

/**
 * The schema cache: the exposed tables and views with their columns, and each role's own
 * settings (ALTER ROLE … SET), those for this database after those for all, so that they win;
 * and PostgREST's in-database configuration, read as it reads it from its login role's settings:
 * the pre-request function (`pgrst.db_pre_request`), as the statement that calls it, if any (an
 * empty name is none, as PostgREST reads it).
 */
async function loadSchemaCache(db: Queryable) {
  const columns = await db.query<{ table: string } & Column>(
    `select c.relname as table, a.attname as name, pg_catalog.format_type(a.atttypid, null) as type
       from pg_catalog.pg_class c
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       join pg_catalog.pg_attribute a on a.attrelid = c.oid
      where n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm', 'f') and a.attnum > 0 and not a.attisdropped
      order by c.relname, a.attnum`,
    [EXPOSED_SCHEMA],
  );
  const settings = await db.query<{ role: string; name: string; value: string }>(
    `select r.rolname as role, split_part(c, '=', 1) as name, substr(c, strpos(c, '=') + 1) as value
       from pg_catalog.pg_db_role_setting s join pg_catalog.pg_roles r on r.oid = s.setrole, unnest(s.setconfig) c
      where s.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = current_database()))
      order by s.setdatabase`,
  );
  const { rows: loginRole } = await db.query<{ role: string }>("select current_user as role");
  const preRequest = settings.rows.findLast(
    ({ role, name }) => role === loginRole[0]!.role && name === "pgrst.db_pre_request",
  );
  return {
    tables: Map.groupBy(columns.rows, ({ table }) => table),
    roleSettings: Map.groupBy(settings.rows, ({ role }) => role),
    preRequest: preRequest?.value ? preRequestStatement(preRequest.value) : null,
  };
}

/** The one relation a path names (`/early_access`); the schema root and /rpc are not implemented. */
function tableName(path: string): string {
  const segments = path.split("/").slice(1);
  if (segments[0] === "" || segments[0] === "rpc") throw notImplemented("The schema root and /rpc are");
  try {
    if (segments.length === 1) return decodeURIComponent(segments[0]!);
  } catch {
    // Malformed percent-encoding: refused as PostgREST refuses it.
  }
  throw postgrestError(404, "PGRST125", "Invalid path specified in request URL");
}

/** Only `public` is exposed; a request that names it gets it confirmed. */
function schemaProfile(schema: string | undefined): Record<string, string> {
  if (schema === undefined) return {};
  if (schema !== EXPOSED_SCHEMA) {
    const hint = `Only the following schemas are exposed: ${EXPOSED_SCHEMA}`;
    throw postgrestError(406, "PGRST106", `Invalid schema: ${schema}`, null, hint);
  }
  return { "Content-Profile": EXPOSED_SCHEMA };
}

/** PostgREST syntax beyond a plain column name: embedding, aliases, casts, JSON paths. */
const BEYOND_PLAIN_NAME = /[(),:!."\0]|->/;

/** A column name, plain or double-quoted as supabase-js quotes `columns`. */
function columnName(raw: string): string {
  const name = raw.trim().replace(/^"(.*)"$/, "$1");
  if (name === "" || BEYOND_PLAIN_NAME.test(name)) throw notImplemented(`The column reference '${raw}' is`);
  return name;
}

/**
 * A `select` item: `*`, or a column with PostgREST's cast if any (`email::text`), whose type
 * PostgREST takes as letters and digits, never quoted.
 */
function selectItem(raw: string): SelectItem {
  const match = /^\s*("[^"]*"|[^:"]+)(?:::([A-Za-z0-9_]+))?\s*$/.exec(raw);
  if (!match) throw notImplemented(`The select item '${raw}' is`);
  const [, column = "", cast = null] = match;
  if (column.trim() === "*") {
    if (cast) throw notImplemented(`The select item '${raw}' is`);
    return { column: "*", cast: null };
  }
  return { column: columnName(column), cast };
}

const OPERATORS: Record<string, "=" | ">=" | "~" | "~*"> = { eq: "=", gte: ">=", match: "~", imatch: "~*" };

/**
 * A filter as PostgREST reads it (QueryParams.hs): `eq.x`, `gte.x`, `match.regex`, `imatch.regex`,
 * `in.(a,"b,c")`, `is.null`, each optionally after `not.`; null for anything else.
 */
function filterOf(column: string, text: string): Filter | null {
  const negated = text.startsWith("not.");
  const [operator, ...rest] = (negated ? text.slice("not.".length) : text).split(".");
  const value = rest.join(".");
  if (rest.length === 0) return null;
  if (Object.hasOwn(OPERATORS, operator!)) return { column, negated, operator: OPERATORS[operator!]!, value };
  if (operator === "is" && value === "null") return { column, negated, operator: "is null" };
  if (operator === "in") {
    const values = listValues(value);
    return values && { column, negated, operator: "in", values };
  }
  return null;
}

/**
 * The values of an `in` list, `(a,"b,c","d\"e")`: each bare up to the next comma, or in double
 * quotes with `\` escaping the next character; null for anything else.
 */
function listValues(text: string): string[] | null {
  if (!text.startsWith("(") || !text.endsWith(")")) return null;
  const values: string[] = [];
  const inner = text.slice(1, -1);
  const element = /"((?:[^"\\]|\\.)*)"(?=,|$)|([^,"]*)/y;
  if (inner === "") return values;
  for (let at = 0; at <= inner.length;) {
    element.lastIndex = at;
    const match = element.exec(inner);
    if (!match || (match[1] === undefined && match[2] === undefined)) return null;
    values.push(match[1] !== undefined ? match[1].replace(/\\(.)/g, "$1") : match[2]!);
    at = element.lastIndex;
    if (at === inner.length) break;
    if (inner[at] !== ",") return null;
    at++;
  }
  return values;
}

/** `select`, `columns`, `order`, `limit`, `offset`, and `eq`, `gte`, `match`, `imatch`, `in` and `is.null` filters. */
function parseQuery(query: URLSearchParams, method: string) {
  const filters: Filter[] = [];
  for (const [key, value] of query) {
    if (["select", "columns", "order", "limit", "offset", "on_conflict"].includes(key)) continue;
    const filter = filterOf(columnName(key), value);
    if (!filter) {
      throw notImplemented(
        `The parameter '${key}=${value}' is: only eq, gte, match, imatch, in and is.null filters (and their not.) are`,
      );
    }
    filters.push(filter);
  }
  const select = query.get("select")?.split(",") ?? ["*"];
  // Aggregates (`count()`), which Supabase leaves disabled (db-aggregates-enabled).
  const aggregate = select.some((item) => item.includes("()"));
  if (aggregate) throw postgrestError(400, "PGRST123", "Use of aggregate functions is not allowed");
  const [columns, order, limit, offset, onConflict] = [
    "columns",
    "order",
    "limit",
    "offset",
    "on_conflict",
  ].map((name) => query.get(name));
  if (method !== "GET" && (order ?? limit ?? offset) !== null) throw notImplemented("Paging a write is");
  return {
    select: select.map(selectItem),
    columnsParam: columns === null ? null : columns.split(",").map(columnName),
    onConflict: onConflict === null ? null : onConflict.split(",").map(columnName),
    filters,
    order: order === null ? [] : order.split(",").map(orderTerm),
    limit: limit === null ? null : wholeNumber("limit", limit),
    offset: offset === null ? 0 : wholeNumber("offset", offset),
  };
}

function wholeNumber(name: string, text: string): number {
  if (!/^\d+$/.test(text)) throw notImplemented(`A ${name} other than a whole number is`);
  return Number(text);
}

/** `created_at.desc.nullslast`, as supabase-js's .order() writes it. */
function orderTerm(term: string): OrderTerm {
  const match = /^\s*("[^"]*"|[^.,"]+)(?:\.(asc|desc))?(?:\.(nullsfirst|nullslast))?\s*$/.exec(term);
  if (!match) throw notImplemented(`The order '${term}' is`);
  const [, column = "", direction, nulls] = match;
  return {
    column: columnName(column),
    direction: direction ? (direction.toUpperCase() as OrderTerm["direction"]) : null,
    nulls: nulls ? (nulls === "nullsfirst" ? "NULLS FIRST" : "NULLS LAST") : null,
  };
}

/** `Prefer: return=…, count=exact, resolution=…-duplicates`: comma-separated, the first of each winning. */
function parsePrefer(header = "") {
  const items = header.split(",").map((item) => item.trim());
  const other = items.find((item) =>
    /^(resolution=(?!(ignore|merge)-duplicates$)|count=(?!exact$))/.test(item),
  );
  if (other) throw notImplemented(`Prefer: ${other} is`);
  const returned = items.find((item) => item === "return=representation" || item === "return=minimal");
  const resolution = items.find((item) => item.startsWith("resolution="));
  return {
    return: (returned?.slice("return=".length) ?? null) as "representation" | "minimal" | null,
    count: items.includes("count=exact"),
    resolution: (resolution?.slice("resolution=".length) ?? null) as
      "ignore-duplicates" | "merge-duplicates" | null,
  };
}

/**
 * An insert's JSON body and the columns it sets: `?columns=` (which supabase-js sends for arrays),
 * or else the body's keys, which every element of an array must share.
 */
function readPayload(body: Uint8Array, table: string, tableColumns: Column[], columnsParam: string[] | null) {
  const invalid = postgrestError(400, "PGRST102", "Empty or invalid json");
  const named = (names: string[]) =>
    [...new Set(names)].sort().map((name) => {
      const column = tableColumns.find((candidate) => candidate.name === name);
      const unknown = `Could not find the '${name}' column of '${table}' in the schema cache`;
      if (column) return column;
      throw postgrestError(400, "PGRST204", unknown);
    });
  let json: string;
  try {
    // Bytes that are not UTF-8 are refused rather than stored with U+FFFD in their place.
    json = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body);
  } catch {
    throw invalid;
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    // With `?columns=`, PostgREST hands the body to PostgreSQL unread, whose cast to json refuses
    // it (22P02) in the statement, after the pre-request function.
    if (columnsParam) return { json, isArray: false, columns: named(columnsParam) };
    throw invalid;
  }
  // PostgREST reads a bare number, string or null as an empty array.
  if (typeof value !== "object" || value === null) return { json: "[]", isArray: true, columns: [] };
  return { json, isArray: Array.isArray(value), columns: named(columnsParam ?? bodyKeys(value)) };
}

function bodyKeys(value: object): string[] {
  if (!Array.isArray(value)) return Object.keys(value);
  const keySets = value.map((element: unknown) =>
    typeof element === "object" && element !== null && !Array.isArray(element)
      ? Object.keys(element).sort().join("\0")
      : null,
  );
  if (keySets.some((keys) => keys === null || keys !== keySets[0])) {
    throw postgrestError(400, "PGRST102", "All object keys must match");
  }
  return value.length === 0 ? [] : Object.keys(value[0] as object);
}

/** PostgREST's Content-Range: `0-24/1234`, `*\/0`, `10-14/*`. */
function contentRange(lower: number, upper: number, total: number | null): string {
  return `${total !== 0 && lower <= upper ? `${lower}-${upper}` : "*"}/${total ?? "*"}`;
}

/** Thrown to end a request with a ready answer: an error, in practice. */
export class ResponseError extends Error {
  readonly response: HttpResponse;

  constructor(response: HttpResponse) {
    super(`HTTP ${response.status} ${response.body}`);
    this.response = response;
  }
}

export function jsonResponse(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): HttpResponse {
  return { status, headers: { "Content-Type": JSON_TYPE, ...headers }, body: JSON.stringify(body) };
}

/** PostgREST's error answer (Error.hs): keys in alphabetical order, absent values null. */
export function postgrestError(
  status: number,
  code: string,
  message: string,
  details: string | null = null,
  hint: string | null = null,
  headers: Record<string, string> = {},
): ResponseError {
  const auth: Record<string, string> = status === 401 ? { "WWW-Authenticate": "Bearer" } : {};
  const errorHeaders = { "Proxy-Status": `PostgREST; error=${code}`, ...auth, ...headers };
  return new ResponseError(jsonResponse(status, { code, details, hint, message }, errorHeaders));
}

export function notImplemented(what: string): ResponseError {
  return postgrestError(
    400,
    "PGRST127",
    "Feature not implemented",
    `${what} not supported by the local Supabase`,
  );
}

/** The fields node-postgres's DatabaseError carries from Postgres' error report. */
interface PostgresError {
  code: string;
  message: string;
  detail?: string | null;
  hint?: string | null;
}

function isPostgresError(error: unknown): error is PostgresError {
  return (
    error instanceof Error &&
    typeof (error as Partial<PostgresError>).code === "string" &&
    "severity" in error
  );
}

/** PostgREST's answer to an error Postgres raised, as seen by `role`. */
export function fromPostgresError(
  { code, message, detail = null, hint = null }: PostgresError,
  role: string,
): ResponseError {
  // `raise sqlstate 'PGRST' using message = '{"code":…,"message":…}', detail = '{"status":…,"headers":{…}}'`:
  // the SQL chooses the whole answer (the sign-up rules' 429).
  if (code === "PGRST") {
    const body = JSON.parse(message) as { code: string; message: string; details?: string; hint?: string };
    const answer = JSON.parse(detail!) as { status: number; headers: Record<string, string> };
    const { details = null, hint = null } = body;
    return postgrestError(answer.status, body.code, body.message, details, hint, answer.headers);
  }
  return postgrestError(statusFor(code, message, role !== "anon"), code, message, detail, hint);
}

/**
 * PostgREST's mapSQLtoHTTP: a SQLSTATE or its two-character class, first match wins; anything
 * else is the client's fault (400). 57014, a statement timeout, is 500; 25006, a write in a GET, 405.
 */
const STATUS_BY_SQLSTATE = `08:503 09:500 0L:403 0P:403 23503:409 23505:409 25006:405 25:500 28:403 2D:500
  38:500 39:500 3B:500 40:500 53400:500 53:503 54:500 55:500 57P01:503 57:500 58:500 F0:500 HV:500
  P0001:400 P0:500 XX:500 42883:404 42P01:404 42P17:500`
  .split(/\s+/)
  .map((pair) => pair.split(":") as [string, string]);

function statusFor(code: string, message: string, authed: boolean): number {
  if (code === "42501") return authed ? 403 : 401; // insufficient_privilege
  if (code === "21000") return message.endsWith("requires a WHERE clause") ? 400 : 500;
  // `raise sqlstate 'PT404'` picks the status itself.
  if (code.startsWith("PT")) return Number(code.slice(2)) || 500;
  return Number(STATUS_BY_SQLSTATE.find(([prefix]) => code.startsWith(prefix))?.[1] ?? 400);
}
