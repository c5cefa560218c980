// Which migrations the local Supabase runs alone, outside a transaction, as the Supabase CLI runs
// them: one that is one VACUUM. Every other runs in a transaction of its own.
import { describe, expect, it } from "vitest";
import { runsAlone } from "../../tools/local-supabase/database/migrations.ts";

describe("whether a migration runs alone", () => {
  it.each([
    ["one VACUUM", true, "vacuum full pg_catalog.pg_class;"],
    ["one VACUUM in capitals, of no table", true, "VACUUM;"],
    [
      "one VACUUM after its comments, with options, of several tables",
      true,
      "-- Why.\n-- And how.\nvacuum (full, skip_locked) pg_catalog.pg_class, pg_catalog.pg_proc;\n",
    ],
    ["a VACUUM and another statement", false, "vacuum pg_catalog.pg_class; create table t ();"],
    ["a statement, then a VACUUM", false, "create table t (); vacuum;"],
    ["a comment that says vacuum", false, "-- vacuum the catalogs\ncreate table t ();"],
    ["a name that starts with it", false, "create table vacuum_log ();"],
  ])("%s: %s", (_, alone, sql) => {
    expect(runsAlone(sql)).toBe(alone);
  });
});
