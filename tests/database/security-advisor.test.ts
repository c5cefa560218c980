// Supabase's Security Advisor (supabase/splinter, lints/) as catalog queries, on the migrated
// database of each engine: what it would flag on the hosted project must be empty here, and
// the API roles hold exactly the privileges the site needs, nothing more.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { EXPOSED_SCHEMA } from "../../tools/local-supabase/statements.ts";
import { openTestDatabase } from "../support/database.ts";

let database: Database;
let owner: Database;
beforeAll(async () => {
  ({ database, owner } = await openTestDatabase({ seed: null }));
});
afterAll(() => database.close());

/** PostgREST's pre-request function, which anon and authenticated run on every request. */
const GATE_FOR_EACH_ROLE = ["anon", "authenticated"].map((role) => ({
  function: "request_gate.check_request",
  role,
}));

/** The project's own schemas: not Postgres' nor the migration history's. */
const OWN_SCHEMAS = `n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast', 'supabase_migrations')`;

async function rows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await owner.query<T>(sql, params)).rows;
}

describe("the Security Advisor's lints", () => {
  it("0013 rls_disabled_in_public: every table in the exposed schema has row level security", async () => {
    const found = await rows(
      `
      select c.relname from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       where c.relkind in ('r', 'p') and n.nspname = $1 and not c.relrowsecurity`,
      [EXPOSED_SCHEMA],
    );
    expect(found).toEqual([]);
  });

  it("0008 rls_enabled_no_policy: every table with row level security has a policy", async () => {
    const found = await rows(`
      select n.nspname || '.' || c.relname as table
        from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       where c.relkind = 'r' and ${OWN_SCHEMAS} and c.relrowsecurity
         and not exists (select from pg_catalog.pg_policy p where p.polrelid = c.oid)`);
    expect(found).toEqual([]);
  });

  it("0010 security_definer_view: every view in the exposed schema runs with its reader's rights", async () => {
    const found = await rows(
      `
      select c.relname from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       where c.relkind = 'v' and n.nspname = $1
         and not coalesce(c.reloptions @> array['security_invoker=true'], false)`,
      [EXPOSED_SCHEMA],
    );
    expect(found).toEqual([]);
  });

  it("0024 rls_policy_always_true: no write policy for anon or authenticated is always true", async () => {
    // The lint's test, normalised as it normalises: USING for UPDATE/DELETE/ALL, WITH CHECK for
    // writes, an absent INSERT check counting as true.
    const found = await rows(
      `
      select p.schemaname, p.tablename, p.policyname from pg_catalog.pg_policies p
       where p.permissive = 'PERMISSIVE'
         and (p.roles && array['public', 'anon', 'authenticated']::name[])
         and p.schemaname = $1
         and (
           (p.cmd in ('UPDATE', 'DELETE', 'ALL')
              and (p.qual is null or replace(lower(p.qual), ' ', '') in ('true', '(true)', '1=1', '(1=1)')))
           or replace(lower(coalesce(p.with_check, '')), ' ', '') in ('true', '(true)', '1=1', '(1=1)')
           or (p.cmd = 'INSERT' and p.with_check is null)
         )`,
      [EXPOSED_SCHEMA],
    );
    expect(found).toEqual([]);
  });

  it("0028/0029: no SECURITY DEFINER function anywhere may be executed by anon or authenticated", async () => {
    // The lints look at the exposed schema only; here no schema of the project's is exempt, not
    // even PostgREST's pre-request function, which every request runs with its own rights
    // (05_request_gate.sql).
    const found = await rows(`
      select n.nspname || '.' || p.proname as function, r.role
        from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
       cross join (values ('anon'), ('authenticated')) r(role)
       where p.prosecdef and ${OWN_SCHEMAS}
         and pg_catalog.has_function_privilege(r.role, p.oid, 'EXECUTE')`);
    expect(found).toEqual([]);
  });

  it("0003 auth_rls_initplan (Performance Advisor): every policy reads a setting once per statement, as (select …)", async () => {
    const found = await rows(`
      select p.schemaname || '.' || p.tablename || '.' || p.policyname as policy
        from pg_catalog.pg_policies p
       where p.schemaname not in ('pg_catalog', 'information_schema')
         and exists (
           select from unnest(array[p.qual, p.with_check]) as e(expression)
            where (e.expression ~ '(auth)\\.(uid|jwt|role|email)\\(\\)'
                   and lower(e.expression) !~ 'select\\s+(auth)\\.(uid|jwt|role|email)\\(\\)')
               or (e.expression ~ 'current_setting\\('
                   and lower(e.expression) !~ 'select\\s+current_setting\\('))`);
    expect(found).toEqual([]);
    // The lint reads the policies' text: the wrapped calls are there to read.
    const { with_check } = (
      await rows<{ with_check: string }>(
        "select with_check from pg_catalog.pg_policies where tablename = 'early_access' and cmd = 'INSERT'",
      )
    )[0]!;
    expect(with_check.toLowerCase()).toMatch(/select\s+current_setting\(/);
  });

  it("0026/0027 pg_graphql_*_table_exposed: with pg_graphql installed, early_access alone would be listed", async () => {
    // Not installed here (nor on new projects), so the lints find nothing; on an older project
    // they list every relation anon (authenticated) may select: early_access, for the read-back
    // of a visitor's own row. supabase/README.md tells the owner to drop pg_graphql there.
    const installed = await rows("select from pg_catalog.pg_extension where extname = 'pg_graphql'");
    expect(installed).toEqual([]);
    const selectable = await rows(`
      select r.role, n.nspname || '.' || c.relname as relation
        from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       cross join (values ('anon'), ('authenticated')) r(role)
       where c.relkind in ('r', 'p', 'v', 'm') and ${OWN_SCHEMAS}
         and n.nspname not in ('auth', 'extensions', 'graphql', 'graphql_public', 'realtime', 'storage', 'vault')
         and pg_catalog.has_table_privilege(r.role, c.oid, 'SELECT')
       order by 1, 2`);
    expect(selectable).toEqual([
      { role: "anon", relation: "public.early_access" },
      { role: "authenticated", relation: "public.early_access" },
    ]);
  });

  it("0011 function_search_path_mutable: every function of the project has a fixed search_path", async () => {
    const found = await rows(`
      select n.nspname || '.' || p.proname as function
        from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
        left join pg_catalog.pg_depend d on d.objid = p.oid and d.deptype = 'e'
       where ${OWN_SCHEMAS} and d.objid is null
         and not exists (select from unnest(coalesce(p.proconfig, '{}')) c where c like 'search_path=%')`);
    expect(found).toEqual([]);
  });
});

describe("the API roles are granted only what the site needs", () => {
  const API_ROLES = `(values ('anon'), ('authenticated')) r(role)`;

  it("on tables: read back and add email and phone to early_access, nothing else anywhere", async () => {
    const tablePrivileges = await rows(`
      select r.role, n.nspname || '.' || c.relname as table, x.privilege
        from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       cross join ${API_ROLES}
       cross join unnest(array['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'REFERENCES', 'TRIGGER']) x(privilege)
       where c.relkind in ('r', 'p', 'v', 'm', 'f', 'S') and ${OWN_SCHEMAS}
         and pg_catalog.has_table_privilege(r.role, c.oid, x.privilege)
       order by 1, 2, 3`);
    expect(tablePrivileges).toEqual([
      { role: "anon", table: "public.early_access", privilege: "SELECT" },
      { role: "authenticated", table: "public.early_access", privilege: "SELECT" },
    ]);

    const columnPrivileges = await rows(
      `
      select r.role, a.attname as column, x.privilege
        from pg_catalog.pg_attribute a cross join ${API_ROLES}
       cross join unnest(array['INSERT', 'UPDATE', 'REFERENCES']) x(privilege)
       where a.attrelid = ($1 || '.early_access')::regclass and a.attnum > 0 and not a.attisdropped
         and pg_catalog.has_column_privilege(r.role, a.attrelid, a.attnum, x.privilege)
       order by 1, 2, 3`,
      [EXPOSED_SCHEMA],
    );
    expect(columnPrivileges).toEqual([
      { role: "anon", column: "email", privilege: "INSERT" },
      { role: "anon", column: "phone", privilege: "INSERT" },
      { role: "authenticated", column: "email", privilege: "INSERT" },
      { role: "authenticated", column: "phone", privilege: "INSERT" },
    ]);
  });

  it("on functions: only the gate every request runs", async () => {
    const found = await rows(`
      select r.role, n.nspname || '.' || p.proname as function
        from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
       cross join ${API_ROLES}
       where ${OWN_SCHEMAS} and pg_catalog.has_function_privilege(r.role, p.oid, 'EXECUTE')
       order by 1, 2`);
    expect(found).toEqual(GATE_FOR_EACH_ROLE);
  });

  it("on schemas: the exposed one and the gate's; the helpers' schema is out of reach of every API role", async () => {
    const found = await rows(`
      select r.role, n.nspname as schema
        from pg_catalog.pg_namespace n
       cross join (values ('anon'), ('authenticated'), ('service_role')) r(role)
       where ${OWN_SCHEMAS} and n.nspname not like 'pg\\_%'
         and pg_catalog.has_schema_privilege(r.role, n.oid, 'USAGE')
       order by 1, 2`);
    expect(found).toEqual(
      ["anon", "authenticated", "service_role"].flatMap((role) =>
        [EXPOSED_SCHEMA, "request_gate"].map((schema) => ({ role, schema })),
      ),
    );
  });
});
