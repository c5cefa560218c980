// Where things run locally, read once from the environment and the `.env` files
// (server/environment.ts, which the build reads too).
import { readFileSync } from "node:fs";
import type { Database } from "./backend/database/database.ts";
import { dataFolder, DataDirLockedError, holderOf } from "./backend/database/data-dir-lock.ts";
import { openPGlite } from "./backend/database/pglite.ts";
import { connectPostgres } from "./backend/database/postgres.ts";
import { startBackend, type Backend } from "./backend/index.ts";
import {
  apiPort,
  ConfigurationError,
  port,
  readEnvironment,
  supabaseUrl,
  usesLocalBackend,
} from "./environment.ts";

const env = readEnvironment();

/** Runs `read` on the settings; a setting that makes no sense is reported, and the process exits. */
function setting<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    console.error(`\n  ${error.message.replaceAll("\n", "\n  ")}\n`);
    process.exit(1);
  }
}

export const SITE_PORT = setting(() => port(env, "PORT", 4321));

/** Where the site is served: this machine only, unless HOST says otherwise (0.0.0.0, say). */
export const SITE_HOST = env.HOST ?? "127.0.0.1";

/** Where the embedded backend answers: the Supabase CLI's API port unless told otherwise. */
const API_PORT = setting(() => apiPort(env));

/** Where the site's build sends sign-ups. */
const SUPABASE_URL = setting(() => supabaseUrl(env));

/** A PostgreSQL server for the endpoint to use instead of PGlite (its schema already migrated). */
const DB_URL = env.SUPABASE_DB_URL;

/** Where PGlite keeps its data, in any of its spellings; `memory://` keeps it in memory. */
export const DATA_DIR = env.SUPABASE_DATA_DIR ?? ".data";

/** SQL run once when PGlite creates its database, as Supabase runs supabase/seed.sql. */
const SEED_FILE = env.SUPABASE_SEED_FILE;

function openDatabase(log: (line: string) => void): Promise<Database> {
  if (DB_URL) return Promise.resolve(connectPostgres({ url: DB_URL }));
  return openPGlite({
    dataDir: DATA_DIR,
    log,
    seed: SEED_FILE && readFileSync(SEED_FILE, "utf8"),
  });
}

/**
 * Opens the database and starts the embedded backend on the Supabase CLI's address, logging to
 * `log`. Throws DataDirLockedError when another process holds the data folder, and an
 * EADDRINUSE error when the port is taken, having changed nothing.
 */
export async function openEmbeddedBackend(log: (line: string) => void = console.log): Promise<Backend> {
  return startBackend({ database: await openDatabase(log), port: API_PORT, log });
}

/**
 * Starts the embedded backend on the Supabase CLI's address. When its data folder or its port
 * is taken by another process, says so and exits, having changed nothing.
 */
export async function startEmbeddedBackend(): Promise<Backend> {
  try {
    return await openEmbeddedBackend();
  } catch (error) {
    if (error instanceof DataDirLockedError) console.error(`\n  ${error.message.replaceAll("\n", "\n  ")}\n`);
    else if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      console.error(
        `\n  Port ${API_PORT} is taken: is another backend running? Set SUPABASE_API_PORT for another port.\n`,
      );
    } else throw error;
    process.exit(1);
  }
}

/** Starts the embedded backend unless a real Supabase project is configured. */
export function startLocalBackend(): Promise<Backend | null> {
  return usesLocalBackend(env) ? startEmbeddedBackend() : Promise.resolve(null);
}

/**
 * Whether the embedded backend answering on this machine may be this project's: over PostgreSQL
 * or in memory, nothing tells; on a data folder, only if a running process holds that folder
 * (a backend that answers while nobody holds it serves another folder, or another project).
 */
export function mayServeThisProject(): boolean {
  if (DB_URL || DATA_DIR.startsWith("memory://")) return true;
  return holderOf(DATA_DIR) !== null;
}

function describeData(): string {
  if (DB_URL) return `PostgreSQL at ${new URL(DB_URL).host}`;
  return dataFolder(DATA_DIR) ?? "in memory";
}

export function describeApi(backend: Backend | null): string {
  return backend
    ? `  API:   ${backend.url}  (embedded Supabase backend)\n  Data:  ${describeData()}`
    : `  API:   ${SUPABASE_URL}  (configured Supabase project)`;
}
