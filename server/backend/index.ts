// The embedded Supabase backend: real Postgres behind an HTTP endpoint that answers the REST
// calls the site makes exactly as a Supabase project (PostgREST behind Supabase's gateway)
// does, on the Supabase CLI's address and with its keys. The Postgres is PGlite in-process by
// default, or a real server reached over a pool of connections.
import { resolve } from "node:path";
import type { Database } from "./database/database.ts";
import { openPGlite } from "./database/pglite.ts";
import { connectPostgres, type PostgresOptions } from "./database/postgres.ts";
import { createGateway } from "./http.ts";
import {
  LOCAL_ANON_KEY,
  LOCAL_JWT_SECRET,
  LOCAL_OPAQUE_KEYS,
  LOCAL_PUBLISHABLE_KEY,
  LOCAL_SECRET_KEY,
  LOCAL_SERVICE_ROLE_KEY,
} from "./keys.ts";
import { createRestHandler } from "./postgrest.ts";
import { createRequestRunner } from "./request-transaction.ts";
import { loadSchemaCache } from "./schema-cache.ts";

export interface Backend {
  url: string;
  /** The public key, acting as `anon`; `anonKey` is its legacy JWT twin. */
  publishableKey: string;
  /** The server key, acting as `service_role`; `serviceRoleKey` is its legacy JWT twin. */
  secretKey: string;
  anonKey: string;
  serviceRoleKey: string;
  /** Absolute path of PGlite's data directory; null in memory or on a PostgreSQL server. */
  dataDir: string | null;
  /** Stops answering, lets requests in progress finish, then closes the database (flushing it). */
  close(): Promise<void>;
}

export interface BackendOptions {
  /** Where PGlite keeps the data (default `.data`); null or PGlite's `memory://` keep it in memory. */
  dataDir?: string | null;
  /** A PostgreSQL server to use instead of PGlite, its schema already migrated. */
  postgres?: PostgresOptions;
  /** Default 54321, the Supabase CLI's API port; 0 picks any free port. */
  port?: number;
  host?: string;
  /** Receives one line per request (method, path, status, milliseconds); default console.log. */
  log?: (line: string) => void;
}

export async function startBackend({
  dataDir = ".data",
  postgres,
  port = 54321,
  host = "127.0.0.1",
  log = console.log,
}: BackendOptions = {}): Promise<Backend> {
  const directory =
    postgres || dataDir === null || dataDir.startsWith("memory://") ? null : resolve(dataDir);
  const db: Database = postgres ? connectPostgres(postgres) : await openPGlite(directory, log);
  const cache = await loadSchemaCache(db);
  const handleRest = createRestHandler(cache, createRequestRunner(db, cache.roleSettings));

  const gateway = createGateway({
    jwtSecret: LOCAL_JWT_SECRET,
    opaqueKeys: LOCAL_OPAQUE_KEYS,
    handleRest,
    log,
  });
  const boundPort = await gateway.listen(port, host).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${boundPort}`,
    publishableKey: LOCAL_PUBLISHABLE_KEY,
    secretKey: LOCAL_SECRET_KEY,
    anonKey: LOCAL_ANON_KEY,
    serviceRoleKey: LOCAL_SERVICE_ROLE_KEY,
    dataDir: directory,
    close: () =>
      (closing ??= (async () => {
        await gateway.close();
        await db.close();
      })()),
  };
}
