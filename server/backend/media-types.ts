// Which format an answer takes, from the request's Accept header, as PostgREST chooses it
// (negotiateContent in Plan.hs, MediaType.hs, and WAI's parseHttpAccept): the accepted types
// best first, and the first one it can produce wins. The embedded backend produces JSON and CSV.
import { postgrestError } from "./errors.ts";
import { notImplemented } from "./query-params.ts";

export type OutputFormat = "json" | "csv";

export const CONTENT_TYPES: Record<OutputFormat, string> = {
  json: "application/json; charset=utf-8",
  csv: "text/csv; charset=utf-8",
};

/**
 * The accepted types, best first: by quality, then by how specific they are (more parameters,
 * fewer `*`), keeping the header's order otherwise. Spaces are dropped, as WAI drops them.
 */
export function parseAccept(header: string): string[] {
  return header
    .split(",")
    .map((item, index) => {
      const [type = "", quality = ""] = item.replaceAll(" ", "").split(";q=");
      const q = Number.parseFloat(quality.split(";")[0]!);
      const specificity = [Number.isNaN(q) ? 1 : q, count(type, ";"), -count(type, "*")] as const;
      return { type, specificity, index };
    })
    .sort((a, b) => compareDescending(a.specificity, b.specificity) || a.index - b.index)
    .map(({ type }) => type);
}

const count = (text: string, char: string) => text.split(char).length - 1;

function compareDescending(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return b[i]! - a[i]!;
  return 0;
}

/** What PostgREST makes of one accepted type: a format, one it has and we lack, or none. */
function classify(type: string): OutputFormat | "unsupported" | null {
  const [essence = "", ...parameters] = type.toLowerCase().split(";");
  const stripsNulls = parameters.some((parameter) => parameter.replaceAll('"', "") === "nulls=stripped");
  switch (essence) {
    case "*/*":
    case "application/json":
      return "json";
    case "application/vnd.pgrst.array":
    case "application/vnd.pgrst.array+json":
      return stripsNulls ? "unsupported" : "json";
    case "text/csv":
      return "csv";
    // A single object (supabase-js's .single()) and GeoJSON.
    case "application/vnd.pgrst.object":
    case "application/vnd.pgrst.object+json":
    case "application/geo+json":
      return "unsupported";
    default:
      // Everything else, execution plans included (db-plan-enabled is off on Supabase).
      return null;
  }
}

/** The format of the answer; 406 PGRST107 when none of the accepted types can be produced. */
export function negotiateFormat(accept: string | undefined): OutputFormat {
  const accepted = accept === undefined ? ["*/*"] : parseAccept(accept);
  for (const type of accepted) {
    const format = classify(type);
    if (format === "unsupported") throw notImplemented(`The media type '${type}' is`);
    if (format) return format;
  }
  throw postgrestError(
    406,
    "PGRST107",
    `None of these media types are available: ${accepted.map(mimeOf).join(", ")}`,
  );
}

/** How PostgREST names an accepted type back (toMime): known types without their parameters. */
function mimeOf(type: string): string {
  const essence = type.toLowerCase().split(";")[0]!;
  return KNOWN_TYPES.has(essence) ? essence : type;
}

/** The types MediaType.hs knows by name (besides those negotiated above). */
const KNOWN_TYPES = new Set([
  "text/plain",
  "text/xml",
  "application/openapi+json",
  "application/x-www-form-urlencoded",
  "application/octet-stream",
]);
