// Vitest's global set-up of the database tests: one private PostgreSQL server for the run, of
// the major the project names (`provide: { postgresMajor }` in vitest.config.ts), and
// on it a template database set up as a hosted Supabase project is, with the migrations
// applied as `supabase db push` applies them. Each test file then copies the template into a
// database of its own (database.ts).
import type { TestProject } from "vitest/node";
import type { PostgresMajor } from "../../tools/local-supabase/database/cluster.ts";
import { connectPool } from "../../tools/local-supabase/database/pool.ts";
import { setUpSupabaseProject } from "../../tools/local-supabase/database/supabase-project.ts";
import { startPostgresServer, SUPERUSER } from "./postgres-server.ts";

export const TEMPLATE_DATABASE = "supabase_template";

declare module "vitest" {
  export interface ProvidedContext {
    /** The major of the run's server, set by each project. */
    postgresMajor: PostgresMajor;
    /** Where the run's server is, and the template each test file copies. */
    postgres: { host: string; port: number; template: string };
  }
}

export default async function setup(project: TestProject) {
  const server = await startPostgresServer(project.getProvidedContext().postgresMajor);
  try {
    const cluster = connectPool({ url: server.url(SUPERUSER, "postgres"), poolSize: 1 });
    // Its own statement: CREATE DATABASE refuses to run inside a transaction block.
    await cluster.exec(`create database ${TEMPLATE_DATABASE}`).finally(() => cluster.close());
    await setUpSupabaseProject(server, TEMPLATE_DATABASE);
  } catch (error) {
    await server.stop();
    throw error;
  }

  project.provide("postgres", { host: server.host, port: server.port, template: TEMPLATE_DATABASE });
  return () => server.stop();
}
