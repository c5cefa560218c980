// PostgREST's SQL for the three statements this repository's requests need (QueryBuilder.hs,
// Statements.hs): identifiers quoted, values as parameters, rows turned into JSON by Postgres
// itself (timestamps read as from PostgREST); one row back: the count, the rows' number, their JSON.
// And the call of the pre-request function that comes before each.

export const EXPOSED_SCHEMA = "public";

/** A column as an insert casts the body's JSON to it: its type without modifiers. */
export type Column = { name: string; type: string };

/**
 * A filter of the query string: `eq`, `gte`, `match` (`~`), `imatch` (`~*`) and `in` compare with
 * values, `is` only with null; `negated` for PostgREST's `not.` before the operator.
 */
export type Filter = { column: string; negated?: boolean } & (
  | { operator: "=" | ">=" | "~" | "~*"; value: string }
  | { operator: "in"; values: string[] }
  | { operator: "is null" }
);

export type OrderTerm = {
  column: string;
  direction: "ASC" | "DESC" | null;
  nulls: "NULLS FIRST" | "NULLS LAST" | null;
};

export type Statement = { text: string; params: string[] };

/** A column to send back (`*` for all), cast as `?select=email::text` asks (PostgREST's CAST). */
export type SelectItem = { column: string; cast: string | null };

/** The columns to send back; null sends none, and needs no SELECT privilege. */
export type Selection = SelectItem[] | null;

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
const qualified = (table: string) => `${quote(EXPOSED_SCHEMA)}.${quote(table)}`;
/** The selection as a select list; casts too, or (a write's RETURNING) only the columns. */
const columnsOf = (relation: string, selection: SelectItem[], { casts = true } = {}) =>
  selection
    .map(({ column, cast }) => {
      const field = `${relation}.${column === "*" ? "*" : quote(column)}`;
      return cast && casts ? `CAST(${field} AS ${cast}) AS ${quote(column)}` : field;
    })
    .join(", ");

/** The rows as the answer's body (PostgREST's handlerF), or none. */
const body = (rows: boolean) => (rows ? "coalesce(json_agg(_postgrest_t), '[]')::text" : "''");

/**
 * The call of the pre-request function PostgREST's configuration names (`schema.function`, or a
 * function on the search path), as PostgREST quotes it.
 */
export function preRequestStatement(name: string): string {
  return `select ${name.split(".").map(quote).join(".")}()`;
}

export interface Read {
  table: string;
  selection: SelectItem[];
  filters: Filter[];
  order: OrderTerm[];
  limit: number;
  offset: number;
  /** Count every row the filters match, besides the page. */
  count: boolean;
}

export function readStatement({ table, selection, filters, order, limit, offset, count }: Read): Statement {
  const params: string[] = [];
  const filter = where(table, filters, params);
  const sorted = order.map(({ column, direction, nulls }) =>
    [`${quote(table)}.${quote(column)}`, direction, nulls].filter(Boolean).join(" "),
  );
  params.push(String(limit), String(offset));
  const page =
    `SELECT ${columnsOf(quote(table), selection)} FROM ${qualified(table)}${filter}` +
    `${sorted.length ? ` ORDER BY ${sorted.join(", ")}` : ""} LIMIT $${params.length - 1} OFFSET $${params.length}`;
  const total = count ? `(SELECT pg_catalog.count(*) FROM ${qualified(table)}${filter})` : "null::bigint";
  return {
    text:
      `WITH pgrst_source AS (${page}) SELECT ${total} AS total_result_set, ` +
      `pg_catalog.count(_postgrest_t) AS page_total, ${body(true)} AS body FROM (SELECT * FROM pgrst_source) _postgrest_t`,
    params,
  };
}

/** What an insert does with a row that conflicts with a stored one on these columns: skip it, or update that one with it. */
export type Conflict = { on: string[]; merge: boolean };

/**
 * The body's rows typed by the table's columns (json_to_record[set]), inserted; with no column,
 * each element takes the defaults; with `conflict`, a row that conflicts is skipped or merged
 * into the stored one (PostgREST's DO UPDATE of the body's columns). The body is always parameter $1.
 */
export function insertStatement(
  table: string,
  { json, isArray, columns }: { json: string; isArray: boolean; columns: Column[] },
  selection: Selection,
  conflict: Conflict | null = null,
): Statement {
  const names = columns.map(({ name }) => quote(name));
  const payload = "(SELECT $1::json AS json_data) pgrst_payload";
  const source =
    columns.length === 0
      ? `${payload}, LATERAL (SELECT FROM json_array_elements(CASE WHEN json_typeof(pgrst_payload.json_data) = 'array' ` +
        "THEN pgrst_payload.json_data ELSE json_build_array(pgrst_payload.json_data) END)) pgrst_body"
      : `${payload}, LATERAL (SELECT ${names.join(",")} FROM ${isArray ? "json_to_recordset" : "json_to_record"}` +
        `(pgrst_payload.json_data) AS _(${columns.map(({ name, type }) => `${quote(name)} ${type}`).join(",")})) pgrst_body`;
  const target = names.length === 0 ? qualified(table) : `${qualified(table)}(${names.join(",")})`;
  const values = names.map((name) => `"pgrst_body".${name}`).join(",");
  const merged = names.map((name) => `${name} = EXCLUDED.${name}`).join(", ");
  const onConflict = conflict
    ? ` ON CONFLICT(${conflict.on.map(quote).join(",")}) ` +
      (conflict.merge && names.length > 0 ? `DO UPDATE SET ${merged}` : "DO NOTHING")
    : "";
  return mutation(
    table,
    selection,
    [json],
    `INSERT INTO ${target} SELECT ${values} FROM ${source}${onConflict}`,
  );
}

export function deleteStatement(table: string, filters: Filter[], selection: Selection): Statement {
  const params: string[] = [];
  const filter = where(table, filters, params);
  return mutation(table, selection, params, `DELETE FROM ${qualified(table)}${filter}`);
}

/**
 * A write wrapped as PostgREST wraps it: without a selection it returns `1` per row. Casts apply
 * in the outer select, after the write and its triggers, in the same statement: a cast that
 * fails rolls the write back.
 */
function mutation(table: string, selection: Selection, params: string[], write: string): Statement {
  const returning = selection ? columnsOf(qualified(table), selection, { casts: false }) : "1";
  const columns = selection ? columnsOf(quote(table), selection) : "1";
  return {
    text:
      `WITH pgrst_source AS (${write} RETURNING ${returning}) SELECT null::bigint AS total_result_set, ` +
      `pg_catalog.count(_postgrest_t) AS page_total, ${body(selection !== null)} AS body ` +
      `FROM (SELECT ${columns} FROM "pgrst_source" AS ${quote(table)}) _postgrest_t`,
    params,
  };
}

/**
 * ` WHERE "t"."c" >= $n AND …`; each value a parameter, left for Postgres to type (an `in` list as
 * one array, `= ANY ($n)`, as PostgREST sends it).
 */
function where(table: string, filters: Filter[], params: string[]): string {
  if (filters.length === 0) return "";
  const conditions = filters.map((filter) => {
    const column = `${quote(table)}.${quote(filter.column)}`;
    let condition: string;
    if (filter.operator === "is null") condition = `${column} IS NULL`;
    else if (filter.operator === "in") {
      params.push(arrayLiteral(filter.values));
      condition = `${column} = ANY ($${params.length})`;
    } else {
      params.push(filter.value);
      condition = `${column} ${filter.operator} $${params.length}`;
    }
    return filter.negated ? `NOT (${condition})` : condition;
  });
  return ` WHERE ${conditions.join(" AND ")}`;
}

/** A PostgreSQL array literal of these values, each quoted, `"` and `\\` escaped: `{"a","b,c"}`. */
function arrayLiteral(values: string[]): string {
  return `{${values.map((value) => `"${value.replace(/["\\]/g, "\\$&")}"`).join(",")}}`;
}
