// The `Prefer` header (RFC 7240) as PostgREST reads it (ApiRequest/Preferences.hs): comma-
// separated, in one header or several, the first value of each kind winning; and the
// `Preference-Applied` header that reports the ones it honoured.
import { notImplemented } from "./query-params.ts";

export interface Preferences {
  /** `return=`: the rows written (representation), or nothing. */
  return: "representation" | "minimal" | null;
  /** `count=exact`: the total number of rows the request's filters match. */
  countExact: boolean;
}

export function parsePreferences(header: string | undefined): Preferences {
  const items = (header ?? "").split(",").map((item) => item.trim());
  const first = <T extends string>(values: readonly T[]) =>
    items.find((item): item is T => (values as readonly string[]).includes(item)) ?? null;

  // Preferences that would change the outcome, which the local backend does not implement.
  if (first(["resolution=merge-duplicates", "resolution=ignore-duplicates"])) {
    throw notImplemented("Upsert (Prefer: resolution) is");
  }
  const count = first(["count=exact", "count=planned", "count=estimated"]);
  if (count && count !== "count=exact") throw notImplemented(`Prefer: ${count} is`);

  const returned = first(["return=representation", "return=minimal"]);
  return {
    return: returned && (returned === "return=representation" ? "representation" : "minimal"),
    countExact: count === "count=exact",
  };
}

/** `Preference-Applied`, in PostgREST's order (prefAppliedHeader); `return=` only on writes. */
export function preferenceApplied(
  { return: returned, countExact }: Preferences,
  write: boolean,
): Record<string, string> {
  const applied = [write && returned ? `return=${returned}` : null, countExact ? "count=exact" : null];
  const value = applied.filter(Boolean).join(", ");
  return value ? { "Preference-Applied": value } : {};
}
