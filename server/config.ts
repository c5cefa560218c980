// Where things run locally, read once from the environment (and `.env`, when present).
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { startBackend, type Backend } from "./backend/index.ts";

if (existsSync(".env")) process.loadEnvFile(".env");

export const SITE_PORT = Number(process.env.PORT ?? 4321);

/** Where the embedded backend keeps its data; `memory://` (PGlite's spelling) keeps it in memory. */
const DATA_DIR = process.env.SUPABASE_DATA_DIR ?? ".data";
const IN_MEMORY = DATA_DIR === "memory://";

/**
 * False when the site is configured for a Supabase project elsewhere; otherwise the embedded
 * backend stands in for the Supabase CLI's local stack, on its address.
 */
function usesLocalBackend(): boolean {
  const url = process.env.PUBLIC_SUPABASE_URL;
  if (!url) return true;
  const { hostname, port } = new URL(url);
  return ["127.0.0.1", "localhost", "[::1]"].includes(hostname) && port === "54321";
}

/** Starts the embedded backend on the Supabase CLI's address, with its data in SUPABASE_DATA_DIR. */
export function startEmbeddedBackend(): Promise<Backend> {
  return startBackend({ dataDir: IN_MEMORY ? null : DATA_DIR });
}

/** Starts the embedded backend unless a real Supabase project is configured. */
export function startLocalBackend(): Promise<Backend | null> {
  return usesLocalBackend() ? startEmbeddedBackend() : Promise.resolve(null);
}

export function describeApi(backend: Backend | null): string {
  return backend
    ? `  API:   ${backend.url}  (embedded Supabase backend)\n  Data:  ${IN_MEMORY ? "in memory" : resolve(DATA_DIR)}`
    : `  API:   ${process.env.PUBLIC_SUPABASE_URL}  (configured Supabase project)`;
}
