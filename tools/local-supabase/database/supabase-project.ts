// A database set up as a hosted Supabase project is, before any migration: the superuser is
// `supabase_admin`, `postgres` owns the project but is no superuser
// (supabase/postgres, migrations/db/migrations/10000000000000_demote-postgres.sql), the API
// roles and `authenticator` exist with their settings and the default privileges hosted
// projects give, and `postgres` is a member of each API role
// (20230201083204_grant_auth_roles_to_postgres.sql), and may set PostgREST's pre-request function
// on authenticator, as supautils lets it (supabase-roles.sql). Then the migrations run as
// `postgres`, as `supabase db push` runs them.
import { readFileSync } from "node:fs";
import { SUPERUSER, type PostgresCluster } from "./cluster.ts";
import { applyMigrations, type MigrationReport } from "./migrations.ts";
import { connectPool } from "./pool.ts";

/** The project's owner, who applies the migrations. */
export const OWNER = "postgres";

/** The role PostgREST logs in as, and switches from to each request's role. */
export const LOGIN_ROLE = "authenticator";

const SUPABASE_ROLES_SQL = readFileSync(new URL("./supabase-roles.sql", import.meta.url), "utf8");

const OWNER_ROLE_SQL = `
  do $$
  begin
    if not exists (select from pg_catalog.pg_roles where rolname = '${OWNER}') then
      create role ${OWNER} login nosuperuser createdb createrole replication bypassrls;
    end if;
  end
  $$;`;

/**
 * Sets `database` up as a project (its owner becomes `postgres`), then applies the migrations
 * it lacks. Safe to run on every start: what exists is left as it is.
 */
export async function setUpSupabaseProject(
  cluster: PostgresCluster,
  database: string,
): Promise<MigrationReport> {
  await prepareSupabaseProject(cluster, database);
  const owner = connectPool({ url: cluster.url(OWNER, database), poolSize: 1 });
  return applyMigrations(owner).finally(() => owner.close());
}

/** Sets `database` up as a project before any migration: its owner, roles and privileges. */
export async function prepareSupabaseProject(
  cluster: Pick<PostgresCluster, "url">,
  database: string,
): Promise<void> {
  const admin = connectPool({ url: cluster.url(SUPERUSER, database), poolSize: 1 });
  try {
    await admin.exec(OWNER_ROLE_SQL);
    await admin.exec(`alter database ${database} owner to ${OWNER}`);
    await admin.exec(SUPABASE_ROLES_SQL);
    await admin.exec(`grant anon, authenticated, service_role to ${OWNER}`);
  } finally {
    await admin.close();
  }
}
