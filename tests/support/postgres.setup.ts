// Vitest's global set-up of the database tests: one private PostgreSQL server for the run per
// major, of the major the project names (`provide: { postgresMajor }` in vitest.config.ts), and
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

interface Shared {
  provided: Promise<{ host: string; port: number; template: string }>;
  stop: () => Promise<void>;
  users: number;
}

/**
 * One server per major for the whole run, shared by every project of that major (`database`,
 * `local-supabase`, `sign-ups`, `workflows` on 17): each test file has a database of its own
 * anyway, and each server costs seconds of initdb and migrations. Kept on globalThis, as each
 * project loads this module anew; stopped when the last project using it is done.
 */
const servers = ((globalThis as { __postgresServers?: Map<PostgresMajor, Shared> }).__postgresServers ??=
  new Map());

async function startShared(major: PostgresMajor): Promise<Omit<Shared, "users">> {
  const server = await startPostgresServer(major);
  try {
    const cluster = connectPool({ url: server.url(SUPERUSER, "postgres"), poolSize: 1 });
    // Its own statement: CREATE DATABASE refuses to run inside a transaction block.
    await cluster.exec(`create database ${TEMPLATE_DATABASE}`).finally(() => cluster.close());
    await setUpSupabaseProject(server, TEMPLATE_DATABASE);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return {
    provided: Promise.resolve({ host: server.host, port: server.port, template: TEMPLATE_DATABASE }),
    stop: () => server.stop(),
  };
}

export default async function setup(project: TestProject) {
  const major = project.getProvidedContext().postgresMajor;
  let shared = servers.get(major);
  if (!shared) {
    const starting = startShared(major);
    shared = {
      provided: starting.then(({ provided }) => provided),
      stop: () => starting.then(({ stop }) => stop()),
      users: 0,
    };
    servers.set(major, shared);
    // A server that failed to start is not shared: the next project tries again.
    starting.catch(() => servers.delete(major));
  }
  shared.users++;
  const mine = shared;
  try {
    project.provide("postgres", await mine.provided);
  } catch (error) {
    mine.users--;
    throw error;
  }
  return async () => {
    if (--mine.users > 0) return;
    servers.delete(major);
    await mine.stop();
  };
}
