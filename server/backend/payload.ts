// The JSON body of an insert or update as PostgREST reads it (ApiRequest/Payload.hs, Plan.hs):
// which columns it sets, each checked against the table before any SQL runs.
import { postgrestError } from "./errors.ts";
import type { Column } from "./schema-cache.ts";
import type { Payload } from "./sql.ts";

/**
 * `columnsParam` (`?columns=`) names the columns instead of the body's keys; then, as in
 * PostgREST, keys outside it are ignored and array elements need not share their keys.
 */
export function parsePayload(
  body: string,
  table: string,
  tableColumns: Column[],
  columnsParam: string[] | null,
): Payload {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw postgrestError(400, "PGRST102", "Empty or invalid json");
  }
  // PostgREST reads a bare number, string or null as an empty array.
  if (typeof value !== "object" || value === null) return { json: "[]", isArray: true, columns: [] };

  const names = [...new Set(columnsParam ?? bodyKeys(value))].sort();
  const columns = names.map((name) => {
    const column = tableColumns.find((candidate) => candidate.name === name);
    if (!column)
      throw postgrestError(
        400,
        "PGRST204",
        `Could not find the '${name}' column of '${table}' in the schema cache`,
      );
    return column;
  });
  return { json: body, isArray: Array.isArray(value), columns };
}

/** An object's keys; for an array, the keys every element shares. */
function bodyKeys(value: object): string[] {
  if (!Array.isArray(value)) return Object.keys(value);
  if (value.length === 0) return [];
  const keySets = value.map((element: unknown) =>
    typeof element === "object" && element !== null && !Array.isArray(element)
      ? Object.keys(element).sort().join("\0")
      : null,
  );
  if (keySets.some((keys) => keys === null || keys !== keySets[0])) {
    throw postgrestError(400, "PGRST102", "All object keys must match");
  }
  return Object.keys(value[0] as object);
}
