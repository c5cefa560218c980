// Where things run locally, read once from the environment (and `.env`, when present).
import { existsSync } from "node:fs";

if (existsSync(".env")) process.loadEnvFile(".env");

export const SITE_PORT = Number(process.env.PORT ?? 4321);
export const DATA_DIR = process.env.SUPABASE_DATA_DIR ?? ".data";

/**
 * True unless the site is configured for a Supabase project elsewhere: the embedded backend
 * stands in for the Supabase CLI's local stack on its address.
 */
export function usesLocalBackend(): boolean {
  const url = process.env.PUBLIC_SUPABASE_URL;
  if (!url) return true;
  const { hostname, port } = new URL(url);
  return ["127.0.0.1", "localhost", "[::1]"].includes(hostname) && port === "54321";
}
