// supabase/migrations as the Supabase CLI reads it: `<version>_<name>.sql`, applied in the
// order of the file names, the version the UTC instant `supabase migration new` names it by
// (YYYYMMDDHHMMSS). A migration named later than the moment it lands sorts after the owner's
// next one, made with `supabase migration new`, and `db push` then refuses that one (it asks for
// --include-all): so none may be named in the future.
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";

const MIGRATIONS = new URL("../../supabase/migrations/", import.meta.url);

/** The UTC instant a migration's name gives, in ms; null for a name that gives none. */
function namedInstant(file: string): number | null {
  const match = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)_[a-z0-9_]+\.sql$/.exec(file);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as number[];
  const instant = Date.UTC(year!, month! - 1, day!, hour, minute, second);
  // Date.UTC carries 2026-02-30 over into March: a name that is no real instant gives none.
  const back = new Date(instant).toISOString().replace(/\D/g, "").slice(0, 14);
  return back === file.slice(0, 14) ? instant : null;
}

const files = readdirSync(MIGRATIONS).filter((name) => name.endsWith(".sql"));

describe("the name of a migration", () => {
  it.each([
    ["20261127060610_early_access.sql", Date.UTC(2026, 10, 27, 6, 6, 10)],
    ["20240229235959_leap_day.sql", Date.UTC(2024, 1, 29, 23, 59, 59)],
    ["20250229000000_no_leap_day.sql", null],
    ["20261127246010_no_hour_24.sql", null],
    ["2026112706061_one_digit_short.sql", null],
    ["20261127060610-early_access.sql", null],
    ["20261127060610_Early_Access.sql", null],
  ])("%s names %s", (file, instant) => {
    expect(namedInstant(file)).toBe(instant);
  });
});

describe("supabase/migrations", () => {
  it.each(files)("%s is named by a UTC instant no later than now", (file) => {
    const instant = namedInstant(file);
    expect(instant, "YYYYMMDDHHMMSS_name.sql, a real instant, in lower case").not.toBeNull();
    expect(instant!, `named in the future: after ${new Date().toISOString()}`).toBeLessThanOrEqual(
      Date.now(),
    );
  });

  it("sort by name in the order of their instants, each instant once, as the CLI applies them", () => {
    const byName = files.toSorted();
    const byInstant = files.toSorted((a, b) => namedInstant(a)! - namedInstant(b)!);
    expect(byInstant).toEqual(byName);
    expect(new Set(files.map((file) => file.slice(0, 14))).size).toBe(files.length);
  });
});
