// The embedded Supabase backend: an HTTP endpoint that answers the REST calls the site makes
// exactly as a Supabase project (PostgREST behind Supabase's gateway) does, on the Supabase
// CLI's address and with its keys, over a database it is handed: PGlite in-process
// (database/pglite.ts) or a real PostgreSQL server (database/postgres.ts).
import type { Database } from "./database/database.ts";
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
  /** Stops answering, lets requests in progress finish, then closes the database (flushing it). */
  close(): Promise<void>;
}

export interface BackendOptions {
  /** The database to serve, already set up; the backend closes it when it closes. */
  database: Database;
  /** Default 54321, the Supabase CLI's API port; 0 picks any free port. */
  port?: number;
  host?: string;
  /** Receives one line per request (method, path, status, milliseconds); default console.log. */
  log?: (line: string) => void;
  /** Requests one client may have in progress at once (http.ts, MAX_REQUESTS_PER_CLIENT). */
  maxRequestsPerClient?: number;
}

export async function startBackend({
  database,
  port = 54321,
  host = "127.0.0.1",
  log = console.log,
  maxRequestsPerClient,
}: BackendOptions): Promise<Backend> {
  const gateway = await loadSchemaCache(database)
    .then((cache) =>
      createGateway({
        jwtSecret: LOCAL_JWT_SECRET,
        opaqueKeys: LOCAL_OPAQUE_KEYS,
        handleRest: createRestHandler(cache, createRequestRunner(database, cache)),
        log,
        maxRequestsPerClient,
      }),
    )
    .catch(async (error: unknown) => {
      await database.close();
      throw error;
    });
  const boundPort = await gateway.listen(port, host).catch(async (error: unknown) => {
    await database.close();
    throw error;
  });

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${boundPort}`,
    publishableKey: LOCAL_PUBLISHABLE_KEY,
    secretKey: LOCAL_SECRET_KEY,
    anonKey: LOCAL_ANON_KEY,
    serviceRoleKey: LOCAL_SERVICE_ROLE_KEY,
    close: () =>
      (closing ??= (async () => {
        await gateway.close();
        await database.close();
      })()),
  };
}
