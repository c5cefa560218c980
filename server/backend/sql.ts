// PostgREST's SQL for the requests the embedded backend supports (QueryBuilder.hs,
// SqlFragment.hs, Statements.hs): identifiers quoted, every value a parameter, and rows turned
// into JSON by Postgres itself, so timestamps and numbers read exactly as from PostgREST.
import type { OutputFormat } from "./media-types.ts";
import { OPERATORS, type Filter, type OrderTerm } from "./query-params.ts";
import { limitOffset, type Range } from "./ranges.ts";
import { EXPOSED_SCHEMA, type Column } from "./schema-cache.ts";

export interface Statement {
  text: string;
  params: string[];
}

/** The written rows' columns to send back (`*` allowed) and in which format; null for none. */
export type Selection = { columns: string[]; format: OutputFormat } | null;

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

/** How the rows become the answer's body (handlerF); `none` for HEAD and return=minimal. */
export type BodyFormat = OutputFormat | "none";

/**
 * PostgREST's CSV (asCsvF): the column names of the first row, then each row as Postgres
 * writes a record, less its parentheses (quoted where needed, `"` and `\` doubled).
 */
const CSV_BODY =
  "(SELECT coalesce(string_agg(a.k, ','), '') FROM (SELECT json_object_keys(r)::text AS k " +
  "FROM (SELECT row_to_json(hh) AS r FROM pgrst_source AS hh LIMIT 1) s) a) || E'\\n' || " +
  "coalesce(string_agg(substring(_postgrest_t::text, 2, length(_postgrest_t::text) - 2), E'\\n'), '')";

const BODIES: Record<BodyFormat, string> = {
  json: "coalesce(json_agg(_postgrest_t), '[]')::text",
  csv: CSV_BODY,
  none: "''",
};

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
  format: BodyFormat;
}

/** mainRead in Statements.hs: the page in `pgrst_source`, and the count of all matching rows apart. */
export function readStatement({ table, selection, filters, order, range, count, format }: Read): Statement {
  const params: string[] = [];
  const filter = where(table, filters, params);
  const page =
    `SELECT ${selectList(quoteIdent(table), selection)} FROM ${qualified(table)}${filter}` +
    `${orderBy(table, order)}${limitOffset(range, params)}`;
  const counted = count ? `, pgrst_source_count AS (SELECT 1 FROM ${qualified(table)}${filter})` : "";
  const total = count ? "(SELECT pg_catalog.count(*) FROM pgrst_source_count)" : "null::bigint";
  const text =
    `WITH pgrst_source AS (${page})${counted} ` +
    `SELECT ${total} AS total_result_set, pg_catalog.count(_postgrest_t) AS page_total, ${BODIES[format]} AS body ` +
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

export function updateStatement(
  table: string,
  payload: Payload,
  filters: Filter[],
  selection: Selection,
): Statement {
  if (payload.columns.length === 0) {
    // Nothing to set: PostgREST changes no row.
    return mutationStatement(
      table,
      selection,
      [],
      (returning) => `SELECT ${returning} FROM ${qualified(table)} WHERE false`,
    );
  }
  const params = [payload.json];
  const filter = where(table, filters, params);
  const assignments = payload.columns.map(
    ({ name }) => `${quoteIdent(name)} = "pgrst_body".${quoteIdent(name)}`,
  );
  // An array body updates with its first element.
  const source = payloadSource(payload, { firstRowOnly: true });
  return mutationStatement(
    table,
    selection,
    params,
    (returning) =>
      `UPDATE ${qualified(table)} SET ${assignments.join(", ")} FROM ${source}${filter} RETURNING ${returning}`,
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
 * SELECT privilege or policy; otherwise the selected columns come back, in JSON or CSV.
 */
function mutationStatement(
  table: string,
  selection: Selection,
  params: string[],
  mutation: (returning: string) => string,
): Statement {
  const returning = selection ? selectList(qualified(table), selection.columns) : "1";
  const columns = selection ? selectList(quoteIdent(table), selection.columns) : "1";
  const body = BODIES[selection?.format ?? "none"];
  const text =
    `WITH pgrst_source AS (${mutation(returning)}) ` +
    `SELECT null::bigint AS total_result_set, pg_catalog.count(_postgrest_t) AS page_total, ${body} AS body ` +
    `FROM (SELECT ${columns} FROM "pgrst_source" AS ${quoteIdent(table)}) _postgrest_t`;
  return { text, params };
}

/** The body's rows, typed by the table's columns; the body is always parameter $1. */
function payloadSource({ isArray, columns }: Payload, { firstRowOnly = false } = {}): string {
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
  const limit = firstRowOnly ? " LIMIT 1" : "";
  return `${payload}, LATERAL (SELECT ${names} FROM ${reader}(pgrst_payload.json_data) AS _(${typed})${limit}) pgrst_body`;
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
