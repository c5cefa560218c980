// The JSON body of an insert as PostgREST reads it (ApiRequest/Payload.hs, Plan.hs):
// its media type, then the JSON itself, then which columns it sets, each checked against the
// table before any SQL runs.
import { postgrestError } from "../errors.ts";
import { notImplemented } from "./query-params.ts";
import type { Column } from "../schema-cache.ts";
import type { Payload } from "../query/statements.ts";

const INVALID_JSON = "Empty or invalid json";

/**
 * `columnsParam` (`?columns=`) names the columns instead of the body's keys; then, as in
 * PostgREST, keys outside it are ignored and array elements need not share their keys.
 */
export function parsePayload(
  body: Uint8Array,
  contentType: string | undefined,
  table: string,
  tableColumns: Column[],
  columnsParam: string[] | null,
): Payload {
  checkMediaType(contentType);
  const text = decodeUtf8(body);
  if (text === null) throw postgrestError(400, "PGRST102", INVALID_JSON);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw postgrestError(400, "PGRST102", INVALID_JSON);
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
  return { json: text, isArray: Array.isArray(value), columns };
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

/**
 * PostgREST reads a write's body as JSON when Content-Type says so or says nothing, and refuses
 * what it cannot read with 400 PGRST102 (ApiRequest.hs, MediaType.hs). CSV and form bodies,
 * which PostgREST reads too, are left out of the local backend.
 */
function checkMediaType(contentType: string | undefined): void {
  if (contentType === undefined) return;
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase();
  if (mediaType === "application/json") return;
  // PostgREST's own array type is plain JSON too, unless it asks for nulls to be stripped.
  if (PGRST_ARRAY_TYPES.has(mediaType) && !/nulls\s*=\s*stripped/i.test(contentType)) return;
  if (mediaType === "text/csv" || mediaType === "application/x-www-form-urlencoded") {
    throw notImplemented(`A ${mediaType} body is`);
  }
  // PostgREST names a media type it knows by its type alone, any other by the header as sent.
  const named = KNOWN_MEDIA_TYPES.has(mediaType) ? mediaType : contentType;
  throw postgrestError(400, "PGRST102", `Content-Type not acceptable: ${named}`);
}

const PGRST_ARRAY_TYPES = new Set(["application/vnd.pgrst.array+json", "application/vnd.pgrst.array"]);

const KNOWN_MEDIA_TYPES = new Set([
  "text/plain",
  "text/xml",
  "application/octet-stream",
  "application/geo+json",
  "application/openapi+json",
  "application/vnd.pgrst.object+json",
]);

/** The text, or null when the bytes are not UTF-8 (which Node would quietly turn into U+FFFD). */
function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}
