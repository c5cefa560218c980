// PostgREST's SQL for the requests the local backend supports (QueryBuilder.hs,
// SqlFragment.hs, Statements.hs): identifiers quoted, every value a parameter, and rows turned
// into JSON by Postgres itself, so timestamps and numbers read exactly as from PostgREST.
import { limitOffset, type Range } from "../ranges.ts";
import { OPERATORS, type Filter, type OrderTerm } from "../request/query-params.ts";
import { EXPOSED_SCHEMA, type Column } from "../schema-cache.ts";

export interface Statement {
  text: string;
  params: string[];
}

/** The written rows' columns to send back (`*` allowed); null for none (return=minimal). */
export type Selection = string[] | null;

/** A request body as PostgREST hands it to Postgres: the JSON as sent, and the columns it sets. */
export interface Payload {
  json: string;
  isArray: boolean;
  columns: Column[];
}

/** Every statement answers with the number of rows and their JSON, as PostgREST's do. */
export interface StatementResult {
  /** The rows the filters match, when a count was asked for (Prefer: count=exact). */
  total_result_set: number | null;
  page_total: number;
  body: string;
}

/** The rows as the answer's JSON body (handlerF); for HEAD and return=minimal, none. */
const JSON_BODY = "coalesce(json_agg(_postgrest_t), '[]')::text";
const NO_BODY = "''";

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export interface Read {
  table: string;
  selection: string[];
  filters: Filter[];
  order: OrderTerm[];
  range: Range;
  /** Count every row the filters match, besides the page (Prefer: count=exact). */
  count: boolean;
  /** Whether the rows are sent (GET) or only counted (HEAD). */
  body: boolean;
}

/** mainRead in Statements.hs: the page in `pgrst_source`, and the count of all matching rows apart. */
export function readStatement({ table, selection, filters, order, range, count, body }: Read): Statement {
  const params: string[] = [];
  const filter = where(table, filters, params);
  const page =
    `SELECT ${selectList(quoteIdent(table), selection)} FROM ${qualified(table)}${filter}` +
    `${orderBy(table, order)}${limitOffset(range, params)}`;
  const counted = count ? `, pgrst_source_count AS (SELECT 1 FROM ${qualified(table)}${filter})` : "";
  const total = count ? "(SELECT pg_catalog.count(*) FROM pgrst_source_count)" : "null::bigint";
  const text =
    `WITH pgrst_source AS (${page})${counted} ` +
    `SELECT ${total} AS total_result_set, pg_catalog.count(_postgrest_t) AS page_total, ${body ? JSON_BODY : NO_BODY} AS body ` +
    "FROM (SELECT * FROM pgrst_source) _postgrest_t";
  return { text, params };
}

export function insertStatement(table: string, payload: Payload, selection: Selection): Statement {
  const names = payload.columns.map(({ name }) => quoteIdent(name));
  // Without columns, every row takes the defaults: INSERT INTO t SELECT FROM ...
  const target = names.length === 0 ? qualified(table) : `${qualified(table)}(${names.join(",")})`;
  const values = names.map((name) => `"pgrst_body".${name}`).join(",");
  return mutationStatement(
    table,
    selection,
    [payload.json],
    (returning) =>
      `INSERT INTO ${target} SELECT ${values} FROM ${payloadSource(payload)} RETURNING ${returning}`,
  );
}

export function deleteStatement(table: string, filters: Filter[], selection: Selection): Statement {
  const params: string[] = [];
  const filter = where(table, filters, params);
  return mutationStatement(
    table,
    selection,
    params,
    (returning) => `DELETE FROM ${qualified(table)}${filter} RETURNING ${returning}`,
  );
}

/**
 * Wraps a mutation as PostgREST does. return=minimal returns `1` per row, so it needs no
 * SELECT privilege or policy; otherwise the selected columns come back.
 */
function mutationStatement(
  table: string,
  selection: Selection,
  params: string[],
  mutation: (returning: string) => string,
): Statement {
  const returning = selection ? selectList(qualified(table), selection) : "1";
  const columns = selection ? selectList(quoteIdent(table), selection) : "1";
  const body = selection ? JSON_BODY : NO_BODY;
  const text =
    `WITH pgrst_source AS (${mutation(returning)}) ` +
    `SELECT null::bigint AS total_result_set, pg_catalog.count(_postgrest_t) AS page_total, ${body} AS body ` +
    `FROM (SELECT ${columns} FROM "pgrst_source" AS ${quoteIdent(table)}) _postgrest_t`;
  return { text, params };
}

/** The body's rows, typed by the table's columns; the body is always parameter $1. */
function payloadSource({ isArray, columns }: Payload): string {
  const payload = "(SELECT $1::json AS json_data) pgrst_payload";
  if (columns.length === 0) {
    const rows =
      "json_array_elements(CASE WHEN json_typeof(pgrst_payload.json_data) = 'array' " +
      "THEN pgrst_payload.json_data ELSE json_build_array(pgrst_payload.json_data) END)";
    return `${payload}, LATERAL (SELECT FROM ${rows}) pgrst_body`;
  }
  const names = columns.map(({ name }) => quoteIdent(name)).join(",");
  const typed = columns.map(({ name, type }) => `${quoteIdent(name)} ${type}`).join(",");
  const reader = isArray ? "json_to_recordset" : "json_to_record";
  return `${payload}, LATERAL (SELECT ${names} FROM ${reader}(pgrst_payload.json_data) AS _(${typed})) pgrst_body`;
}

/** The columns of `relation` (a quoted name, schema-qualified or not), `*` allowed. */
function selectList(relation: string, selection: string[]): string {
  return selection.map((name) => `${relation}.${name === "*" ? "*" : quoteIdent(name)}`).join(", ");
}

/** ` WHERE "t"."c" >= $n AND ...`; each value is added to `params` and left for Postgres to type. */
function where(table: string, filters: Filter[], params: string[]): string {
  if (filters.length === 0) return "";
  const conditions = filters.map(({ column, operator, value }) => {
    params.push(value);
    return `${quoteIdent(table)}.${quoteIdent(column)} ${OPERATORS[operator]} $${params.length}`;
  });
  return ` WHERE ${conditions.join(" AND ")}`;
}

/** ` ORDER BY "t"."c" DESC NULLS LAST, ...` (orderF). */
function orderBy(table: string, order: OrderTerm[]): string {
  if (order.length === 0) return "";
  const terms = order.map(({ column, direction, nulls }) =>
    [
      `${quoteIdent(table)}.${quoteIdent(column)}`,
      direction?.toUpperCase(),
      nulls && (nulls === "nullsfirst" ? "NULLS FIRST" : "NULLS LAST"),
    ]
      .filter(Boolean)
      .join(" "),
  );
  return ` ORDER BY ${terms.join(", ")}`;
}

function qualified(table: string): string {
  return `${quoteIdent(EXPOSED_SCHEMA)}.${quoteIdent(table)}`;
}
