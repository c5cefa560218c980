// PostgREST's SQL for the requests the embedded backend supports (QueryBuilder.hs,
// SqlFragment.hs, Statements.hs): identifiers quoted, every value a parameter, and rows turned
// into JSON by Postgres itself, so timestamps and numbers read exactly as from PostgREST.
import { EXPOSED_SCHEMA, type Column } from "./schema-cache.ts";

export interface Statement {
  text: string;
  params: string[];
}

/** `column=eq.value` in the query string. */
export interface Filter {
  column: string;
  value: string;
}

/** Columns to send back (`*` allowed), or null when nothing is sent back (return=minimal). */
export type Selection = string[] | null;

/** A request body as PostgREST hands it to Postgres: the JSON as sent, and the columns it sets. */
export interface Payload {
  json: string;
  isArray: boolean;
  columns: Column[];
}

/** Every statement answers with the number of rows and their JSON, as PostgREST's do. */
export interface StatementResult {
  page_total: number;
  body: string;
}

const JSON_BODY = "coalesce(json_agg(_postgrest_t), '[]')::text";

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function readStatement(table: string, selection: string[], filters: Filter[]): Statement {
  const params: string[] = [];
  const text =
    `SELECT pg_catalog.count(_postgrest_t) AS page_total, ${JSON_BODY} AS body ` +
    `FROM (SELECT ${selectList(table, selection)} FROM ${qualified(table)}${where(table, filters, params)}) _postgrest_t`;
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
 * SELECT privilege or policy; otherwise the rows come back as a JSON array.
 */
function mutationStatement(
  table: string,
  selection: Selection,
  params: string[],
  mutation: (returning: string) => string,
): Statement {
  const returning = selection ? `${qualified(table)}.*` : "1";
  const columns = selection ? selectList(table, selection) : "1";
  const body = selection ? JSON_BODY : "''";
  const text =
    `WITH pgrst_source AS (${mutation(returning)}) ` +
    `SELECT pg_catalog.count(_postgrest_t) AS page_total, ${body} AS body ` +
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

function selectList(table: string, selection: string[]): string {
  return selection.map((name) => `${quoteIdent(table)}.${name === "*" ? "*" : quoteIdent(name)}`).join(", ");
}

/** ` WHERE "t"."c" = $n AND ...`; each value is added to `params` and left for Postgres to type. */
function where(table: string, filters: Filter[], params: string[]): string {
  if (filters.length === 0) return "";
  const conditions = filters.map(({ column, value }) => {
    params.push(value);
    return `${quoteIdent(table)}.${quoteIdent(column)} = $${params.length}`;
  });
  return ` WHERE ${conditions.join(" AND ")}`;
}

function qualified(table: string): string {
  return `${quoteIdent(EXPOSED_SCHEMA)}.${quoteIdent(table)}`;
}
