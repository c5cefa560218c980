// The local Supabase backend: an HTTP endpoint that answers the REST calls this repository
// makes exactly as a Supabase project (PostgREST behind Supabase's gateway) does, on the
// Supabase CLI's address and with its keys, over a database it is handed (database/).
import { LOCAL_API_PORT, LOCAL_PUBLISHABLE_KEY } from "../../src/local-supabase.ts";
import type { Database } from "./database/database.ts";
import { createGateway } from "./gateway.ts";
import { LOCAL_SECRET_KEY } from "./keys.ts";
import { createPostgrest } from "./postgrest.ts";

export interface Backend {
  url: string;
  /** The public key, acting as `anon`. */
  publishableKey: string;
  /** The server key, acting as `service_role`. */
  secretKey: string;
  /** Stops answering, lets requests in progress finish, then closes the database (flushing it). */
  close(): Promise<void>;
}

export interface BackendOptions {
  /** The database to serve, already set up; the backend closes it when it closes. */
  database: Database;
  /** Default the Supabase CLI's API port; 0 picks any free port. */
  port?: number;
  host?: string;
  /** Receives one line per request (method, path, status, milliseconds); default console.log. */
  log?: (line: string) => void;
}

/** Starts answering over `database`; closing the backend closes the database too. */
export async function startLocalSupabase({
  database,
  port = LOCAL_API_PORT,
  host = "127.0.0.1",
  log = console.log,
}: BackendOptions): Promise<Backend> {
  let boundPort: number;
  let gateway;
  try {
    gateway = createGateway(await createPostgrest(database), log);
    boundPort = await gateway.listen(port, host);
  } catch (error) {
    await database.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${boundPort}`,
    publishableKey: LOCAL_PUBLISHABLE_KEY,
    secretKey: LOCAL_SECRET_KEY,
    close: () => (closing ??= gateway.close().then(() => database.close())),
  };
}
