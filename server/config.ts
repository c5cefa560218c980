// Where things run locally, read once from the environment (and `.env`, when present).
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Database } from "./backend/database/database.ts";
import { DataDirLockedError } from "./backend/database/data-dir-lock.ts";
import { openPGlite } from "./backend/database/pglite.ts";
import { connectPostgres } from "./backend/database/postgres.ts";
import { startBackend, type Backend } from "./backend/index.ts";

if (existsSync(".env")) process.loadEnvFile(".env");

export const SITE_PORT = Number(process.env.PORT ?? 4321);

/** Where the embedded backend answers: the Supabase CLI's API port unless told otherwise. */
const API_PORT = Number(process.env.SUPABASE_API_PORT ?? 54321);

/** A PostgreSQL server for the endpoint to use instead of PGlite (its schema already migrated). */
const DB_URL = process.env.SUPABASE_DB_URL;

/** Where PGlite keeps its data; `memory://` (PGlite's spelling) keeps it in memory. */
const DATA_DIR = process.env.SUPABASE_DATA_DIR ?? ".data";
const IN_MEMORY = DATA_DIR === "memory://";

/** SQL run once when PGlite creates its database, as Supabase runs supabase/seed.sql. */
const SEED_FILE = process.env.SUPABASE_SEED_FILE;

/**
 * False when the site is configured for a Supabase project elsewhere; otherwise the embedded
 * backend stands in for the Supabase CLI's local stack, on its address.
 */
function usesLocalBackend(): boolean {
  const url = process.env.PUBLIC_SUPABASE_URL;
  if (!url) return true;
  const { hostname, port } = new URL(url);
  return ["127.0.0.1", "localhost", "[::1]"].includes(hostname) && Number(port) === API_PORT;
}

function openDatabase(): Promise<Database> {
  if (DB_URL) return Promise.resolve(connectPostgres({ url: DB_URL }));
  return openPGlite({
    dataDir: IN_MEMORY ? null : DATA_DIR,
    log: console.log,
    seed: SEED_FILE && readFileSync(SEED_FILE, "utf8"),
  });
}

/**
 * Starts the embedded backend on the Supabase CLI's address. When its data folder or its port
 * is taken by another process, says so and exits, having changed nothing.
 */
export async function startEmbeddedBackend(): Promise<Backend> {
  try {
    return await startBackend({ database: await openDatabase(), port: API_PORT });
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
  return usesLocalBackend() ? startEmbeddedBackend() : Promise.resolve(null);
}

function describeData(): string {
  if (DB_URL) return `PostgreSQL at ${new URL(DB_URL).host}`;
  return IN_MEMORY ? "in memory" : resolve(DATA_DIR);
}

export function describeApi(backend: Backend | null): string {
  return backend
    ? `  API:   ${backend.url}  (embedded Supabase backend)\n  Data:  ${describeData()}`
    : `  API:   ${process.env.PUBLIC_SUPABASE_URL}  (configured Supabase project)`;
}
