// Shared set-up for the backend tests: a fresh database (a copy of the migrated template on the
// run's PostgreSQL server, postgres/setup.ts), the backend on a free port over it, supabase-js
// clients for its keys, raw REST calls for what supabase-js cannot express, and tokens signed
// on the spot.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { createHmac, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { request, type IncomingHttpHeaders } from "node:http";
import { createServer } from "node:net";
import { inject } from "vitest";
import type { Database, Queryable } from "../../server/local-supabase/database/database.ts";
import { connectPool } from "../../server/local-supabase/database/pool.ts";
import { startLocalSupabase, type Backend } from "../../server/local-supabase/index.ts";
import { LOCAL_JWT_SECRET } from "../../server/local-supabase/keys.ts";
import { LIFT_SIGN_UP_LIMITS_FILE } from "../test-environment.ts";

const postgres = inject("postgres");

/** A connection URL for `user` on `database` of the run's PostgreSQL server (trust: no password). */
export function testServerUrl(user: string, database: string): string {
  return `postgres://${user}@${postgres.host}:${postgres.port}/${database}`;
}

export { LIFT_SIGN_UP_LIMITS_FILE };

/** Lifts the per-address limits, for tests that are not about them (every request is 127.0.0.1's). */
const LIFT_SIGN_UP_LIMITS = readFileSync(LIFT_SIGN_UP_LIMITS_FILE, "utf8");

export interface TestDatabase {
  /** What the endpoint runs on: a pool logged in as PostgREST logs in (authenticator). */
  database: Database;
  /** The project's owner (`postgres`), to look behind the API; closed with `database`. */
  owner: Database;
}

export interface TestDatabaseOptions {
  /** SQL run as the owner once the database exists; null for none. */
  seed?: string | null;
  /** Connections in the endpoint's pool. */
  poolSize?: number;
}

export async function openTestDatabase({
  seed = LIFT_SIGN_UP_LIMITS,
  poolSize = 10,
}: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const name = `test_${randomUUID().replaceAll("-", "")}`;
  const cluster = connectPool({ url: testServerUrl("postgres", "postgres"), poolSize: 1 });
  await cluster
    .exec(`create database ${name} template ${postgres.template} owner postgres`)
    .finally(() => cluster.close());
  const owner = connectPool({ url: testServerUrl("postgres", name), poolSize: 2 });
  if (seed) await owner.exec(seed);
  const api = connectPool({ url: testServerUrl("authenticator", name), poolSize });
  return {
    database: { ...api, close: () => Promise.all([api.close(), owner.close()]).then(() => {}) },
    owner,
  };
}

export interface TestBackendOptions extends TestDatabaseOptions {
  log?: (line: string) => void;
}

/** The backend, with the owner of the database it runs on. */
export type TestBackend = Backend & { owner: Database };

/** The backend on a fresh database, with that database's owner to look behind the API. */
export async function startTestBackend({
  log = () => {},
  ...options
}: TestBackendOptions = {}): Promise<TestBackend> {
  const { database, owner } = await openTestDatabase(options);
  const backend = await startLocalSupabase({ database, port: 0, log });
  return Object.assign(backend, { owner });
}

export function clientFor(backend: Backend, key: string): SupabaseClient {
  return createClient(backend.url, key, { auth: { persistSession: false, autoRefreshToken: false } });
}

/** An address no other test uses, so tests can share one database. */
export function uniqueEmail(label = "visitor"): string {
  return `${label}-${randomUUID()}@example.com`;
}

/** How many of these addresses the table holds, read as the database's owner, past every rule. */
export async function storedCount(owner: Database, emails: string[]): Promise<number> {
  const { rows } = await owner.query<{ n: number }>(
    "select count(*)::integer as n from public.early_access where email = any($1)",
    [emails],
  );
  return rows[0]!.n;
}

/** A visitor's sign-up as the site sends it (one row, read back), as a raw REST call. */
export function signUpCall(
  body: Record<string, unknown> = { email: uniqueEmail() },
  select = "email",
): RestCall {
  return {
    method: "POST",
    path: `early_access?select=${select}`,
    headers: { prefer: "return=representation" },
    body: JSON.stringify(body),
  };
}

/**
 * A visitor's sign-up as PostgREST runs it behind Supabase's edge, in `tx`: as anon, with the
 * edge's headers (for client addresses no socket here can have). Returns the email.
 */
export async function signUpAsVisitor(
  tx: Queryable,
  headers: Record<string, string>,
  email = uniqueEmail(),
): Promise<string> {
  await tx.query("select set_config('request.headers', $1, true), set_config('role', 'anon', true)", [
    JSON.stringify(headers),
  ]);
  await tx.query("insert into public.early_access (email) values ($1)", [email]);
  return email;
}

/** The same, in a transaction of its own. */
export const signUpWithHeaders = (db: Database, headers: Record<string, string>, email = uniqueEmail()) =>
  db.transaction((tx) => signUpAsVisitor(tx, headers, email));

export const DUPLICATE_MESSAGE = 'duplicate key value violates unique constraint "early_access_email_key"';

/** An HS256 JWT with these claims, signed with the local secret unless told otherwise. */
export function signJwt(claims: Record<string, unknown>, secret = LOCAL_JWT_SECRET): string {
  const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString("base64url");
  const unsigned = `${encode({ alg: "HS256", typ: "JWT" })}.${encode(claims)}`;
  return `${unsigned}.${createHmac("sha256", secret).update(unsigned).digest("base64url")}`;
}

export interface RestCall {
  method?: string;
  /** The part after /rest/v1/, query string included. */
  path?: string;
  /** Sent as apikey and as the bearer token; null sends neither. */
  key?: string | null;
  headers?: Record<string, string>;
  body?: string;
}

/** A raw call to the REST endpoint, as anon on early_access unless told otherwise. */
export function rest(backend: Backend, call: RestCall = {}) {
  const { url, method, headers, body } = resolveCall(backend, call);
  return fetch(url, { method, headers, body });
}

function resolveCall(
  backend: Backend,
  { method = "GET", path = "early_access", key, headers = {}, body }: RestCall,
) {
  const apikey = key === undefined ? backend.publishableKey : key;
  const auth: Record<string, string> = apikey === null ? {} : { apikey, authorization: `Bearer ${apikey}` };
  return {
    url: `${backend.url}/rest/v1/${path}`,
    method,
    headers: { "content-type": "application/json", ...auth, ...headers },
    body,
  };
}

/**
 * The same call from another loopback address (127.0.0.2, say): another visitor, as far as the
 * socket can tell. Linux routes all of 127.0.0.0/8 to the loopback; macOS only 127.0.0.1.
 */
export function restFrom(localAddress: string, backend: Backend, call: RestCall = {}) {
  const { url, method, headers, body } = resolveCall(backend, call);
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const outgoing = request(url, { method, headers, localAddress }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode!, headers: response.headers, body: text }),
      );
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

/** Whether this machine can send from `address` (see restFrom). */
export function canSendFrom(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(0, address, () => probe.close(() => resolve(true)));
  });
}
