// Vitest's global set-up of the real-PostgreSQL tier: one private server for the run, set up
// as a hosted Supabase project is, with the migrations applied as `supabase db push` applies
// them. Each test file then copies the migrated template into a database of its own.
import type { TestProject } from "vitest/node";
import { connectPostgres } from "../../../server/backend/database/postgres.ts";
import { applyMigrations } from "../../../server/backend/database/migrations.ts";
import { SUPABASE_ROLES_SQL } from "../../../server/backend/database/pglite.ts";
import { startPostgresServer, SUPERUSER } from "./server.ts";

export const TEMPLATE_DATABASE = "supabase_template";

declare module "vitest" {
  export interface ProvidedContext {
    /** Set in the real-PostgreSQL tier: where its server is. */
    postgres?: { host: string; port: number; template: string };
  }
}

export default async function setup(project: TestProject) {
  const server = await startPostgresServer();
  try {
    const asSuperuser = (database: string) =>
      connectPostgres({ url: server.url(SUPERUSER, database), poolSize: 1 });

    // Hosted projects: `postgres` owns the project's objects but is no superuser
    // (supabase/postgres, migrations/db/migrations/10000000000000_demote-postgres.sql).
    const cluster = asSuperuser("postgres");
    await cluster.exec("create role postgres login nosuperuser createdb createrole replication bypassrls");
    // Its own statement: CREATE DATABASE refuses to run inside a transaction block.
    await cluster.exec(`create database ${TEMPLATE_DATABASE} owner postgres`);
    await cluster.close();

    // The API roles, their settings and the default privileges, as Supabase's image creates
    // them, and `postgres` a member of each (20230201083204_grant_auth_roles_to_postgres.sql).
    const template = asSuperuser(TEMPLATE_DATABASE);
    await template.exec(SUPABASE_ROLES_SQL);
    await template.exec("grant anon, authenticated, service_role to postgres");
    await template.close();

    const owner = connectPostgres({ url: server.url("postgres", TEMPLATE_DATABASE), poolSize: 1 });
    await applyMigrations(owner).finally(() => owner.close());
  } catch (error) {
    await server.stop();
    throw error;
  }

  project.provide("postgres", { host: server.host, port: server.port, template: TEMPLATE_DATABASE });
  return () => server.stop();
}
