// The newest migration of the rules (20261208004407: the rules read in the order they run),
// applied to a live project as `supabase db push` applies it: one that already holds sign-ups,
// marks, its clients' counts and its failures' cells, taken there by the rules before it, through
// the path production takes. It keeps every sign-up, mark and count, and the counts carry on (a
// client past a pace before it is still past it after). That it leaves the database the schema
// files declare, with nothing of the old rules, is schema.test.ts's, over every migration; so is
// the earlier migration this file rehearsed (20261206071454, from shared sketches to each client's
// own counts), which every project has run since.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { applyMigrations } from "../../tools/local-supabase/database/migrations.ts";
import { connectPool } from "../../tools/local-supabase/database/pool.ts";
import { OWNER, prepareSupabaseProject } from "../../tools/local-supabase/database/supabase-project.ts";
import { requestOverSql, signUpOverSql, testServerUrl, uniqueEmail } from "../support/database.ts";

const MIGRATION = "20261208004407";
const name = `upgrade_${randomUUID().replaceAll("-", "")}`;
let owner: Database;
let api: Database;

/** Every sign-up, mark, client's count and failures' cell, as the owner reads them. */
const everything = async () =>
  (
    await owner.query<{ rows: string }>(`select json_build_object(
      'sign_ups', (select json_agg(e order by e.id) from public.early_access e),
      'marks', (select json_agg(m order by m.sign_up_id) from public.early_access_marks m),
      'sources', (select json_agg(s order by s.source_key) from private.sign_up_sources s),
      'cells', (select jsonb_object_agg(c.relname, pg_catalog.pg_sequence_last_value(c.oid)) from pg_catalog.pg_class c
                 where c.relnamespace = 'private'::regnamespace and c.relkind = 'S'))::text as rows`)
  ).rows[0]!.rows;

const marked = async (email: string) =>
  (
    await owner.query(
      "select from public.early_access_marks m join public.early_access e on e.id = m.sign_up_id where e.email = $1",
      [email],
    )
  ).rows.length === 1;

beforeAll(async () => {
  const cluster = connectPool({ url: testServerUrl(OWNER, "postgres"), poolSize: 1 });
  await cluster.exec(`create database ${name}`).finally(() => cluster.close());
  await prepareSupabaseProject({ url: testServerUrl }, name);
  owner = connectPool({ url: testServerUrl(OWNER, name), poolSize: 1 });
  api = connectPool({ url: testServerUrl("authenticator", name), poolSize: 2 });
  await applyMigrations(owner, MIGRATION);
});
afterAll(async () => {
  await Promise.all([owner?.close(), api?.close()]);
  const cluster = connectPool({ url: testServerUrl(OWNER, "postgres"), poolSize: 1 });
  await cluster.exec(`drop database if exists ${name}`).finally(() => cluster.close());
});

describe(`migration ${MIGRATION}, on a project the rules before it have run`, () => {
  const busy = { "cf-connecting-ip": "198.51.100.7" };
  let before: string;
  let listed: string;

  beforeAll(async () => {
    // Past the per-minute pace of 10 from one address: its last two are marked. Then visitors of
    // their own, and a duplicate, charged to its client's failures' cells.
    for (let n = 0; n < 12; n++) listed = await signUpOverSql(api, busy);
    for (let n = 0; n < 5; n++) await signUpOverSql(api, { "cf-connecting-ip": `203.0.113.${n + 1}` });
    expect(await requestOverSql(api, { "cf-connecting-ip": "203.0.113.9" }, [{ email: listed }])).toBe(
      "23505",
    );
    before = await everything();
    const held = JSON.parse(before) as {
      marks: unknown[];
      sources: unknown[];
      cells: Record<string, number>;
    };
    expect([
      held.marks.length,
      held.sources.length > 0,
      Object.values(held.cells).some((n) => n > 0),
    ]).toEqual([2, true, true]);
    expect((await applyMigrations(owner)).applied[0]).toMatch(new RegExp(`^${MIGRATION}_`));
  });

  it("keeps every sign-up, mark, client's count and failures' cell", async () => {
    expect(await everything()).toBe(before);
  });

  it("carries each client's counts on: the busy address is still past its pace, a new one is not", async () => {
    const again = await signUpOverSql(api, busy);
    const fresh = await signUpOverSql(api, { "cf-connecting-ip": "192.0.2.44" }, uniqueEmail("fresh"));
    expect([await marked(again), await marked(fresh)]).toEqual([true, false]);
  });
});
