// Shared set-up for the backend tests: a fresh database (a copy of the migrated template on the
// run's PostgreSQL server, postgres.setup.ts), the backend on a free port over it, supabase-js
// clients for its keys, raw REST calls for what supabase-js cannot express (to any backend,
// another process's too), a visitor's sign-up over each transport, and whether a process still runs.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { request, type IncomingHttpHeaders } from "node:http";
import { createServer } from "node:net";
import { expect, inject } from "vitest";
import type { Database, Queryable } from "../../tools/local-supabase/database/database.ts";
import { connectPool } from "../../tools/local-supabase/database/pool.ts";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { insertStatement, preRequestStatement } from "../../tools/local-supabase/statements.ts";
import { LOCAL_SECRET_KEY } from "../../config/local-supabase.ts";
import { LOCAL_PUBLISHABLE_KEY } from "../../config/local-supabase.ts";
import { LIFT_SIGN_UP_LIMITS_FILE } from "../test-environment.ts";

export { isRunning } from "../../tools/local-supabase/database/data-folder.ts";

/** A connection URL for `user` on `database` of the run's PostgreSQL server (trust: no password). */
export function testServerUrl(user: string, database: string): string {
  const { host, port } = inject("postgres");
  return `postgres://${user}@${host}:${port}/${database}`;
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
  // Copied file by file rather than through the WAL (the default since 15): the template is
  // hundreds of one-page sequences (the failures' cells), and with nothing to keep (fsync off) the
  // two checkpoints this costs are cheaper than logging every page, on 15 and 17 alike.
  await onServer(
    `create database ${name} template ${inject("postgres").template} owner postgres strategy file_copy`,
  );
  const owner = connectPool({ url: testServerUrl("postgres", name), poolSize: 2 });
  if (seed) await owner.exec(seed);
  const api = connectPool({ url: testServerUrl("authenticator", name), poolSize });
  return {
    database: {
      ...api,
      // Dropped once closed: a copy of the template is tens of megabytes in thousands of files,
      // and the run's server would otherwise keep every test file's until the run ends.
      close: () =>
        Promise.all([api.close(), owner.close()]).then(() => onServer(`drop database if exists ${name}`)),
    },
    owner,
  };
}

/** Runs a statement on the run's server as the owner, outside any database of a test's. */
async function onServer(statement: string): Promise<void> {
  // Its own connection: CREATE and DROP DATABASE refuse to run inside a transaction block.
  const cluster = connectPool({ url: testServerUrl("postgres", "postgres"), poolSize: 1 });
  await cluster.exec(statement).finally(() => cluster.close());
}

/**
 * A database of its own whose rules read the time the test sets: private.sign_up_clock(), the one
 * clock the rules read, replaced by one that reads the instant each transaction sets with
 * `atInstant`. The rules and the trigger are otherwise the real ones. `seed` runs after.
 */
export function openClockedDatabase(seed = ""): Promise<TestDatabase> {
  return openTestDatabase({
    seed: `
      create or replace function private.sign_up_clock() returns bigint language plpgsql volatile set search_path = '' as $$
      begin
        return (current_setting('test.sign_up_clock')::float8 * 1000)::bigint;
      end;
      $$;
      ${seed}`,
  });
}

/** Sets a clocked database's clock to `instant` (seconds since 1970) for `tx`'s transaction. */
const atInstant = (tx: Queryable, instant: number) =>
  tx.query("select set_config('test.sign_up_clock', $1, true)", [String(instant)]);

export interface TestBackendOptions extends TestDatabaseOptions {
  log?: (line: string) => void;
}

/** The backend, with the owner of the database it runs on. */
export type TestSupabase = LocalSupabase & { owner: Database };

/** The backend on a fresh database, with that database's owner to look behind the API. */
export async function startTestSupabase({
  log = () => {},
  ...options
}: TestBackendOptions = {}): Promise<TestSupabase> {
  const { database, owner } = await openTestDatabase(options);
  const backend = await startLocalSupabase({ database, port: 0, log });
  return Object.assign(backend, { owner });
}

export function clientFor(backend: LocalSupabase, key: string): SupabaseClient {
  return createClient(backend.url, key, { auth: { persistSession: false, autoRefreshToken: false } });
}

/** An address no other test uses, so tests can share one database. */
export function uniqueEmail(label = "visitor"): string {
  return `${label}-${randomUUID()}@example.com`;
}

/**
 * One client of each of `count` networks (a /24 each, in 100.64.0.0/10, which no other test
 * uses), from the `block`th run of 256 networks on: tests of one database pass different blocks.
 */
export const oneClientPerNetwork = (count: number, block = 0) =>
  Array.from({ length: count }, (_, index) => `100.${64 + block + (index >> 8)}.${index & 255}.7`);

/** How many of these addresses the table holds, read as the database's owner, past every rule. */
export async function storedCount(owner: Database, emails: string[]): Promise<number> {
  const { rows } = await owner.query<{ n: number }>(
    "select count(*)::integer as n from public.early_access where email = any($1)",
    [emails],
  );
  return rows[0]!.n;
}

// A visitor's sign-up, one helper per transport:
// - signUpOverHttp: over HTTP through the endpoint, as the site sends it (signUpCall), from
//   127.0.0.1 or another loopback address;
// - signUpOverSql: as SQL, the way PostgREST runs it behind Supabase's edge, in a transaction of
//   its own; signUpOverSqlIn, in the caller's transaction; signUpOverSqlAt, at an instant of a
//   clocked database's clock, with its answer; requestOverSql(In), any body and conflict clause.

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
 * A visitor's sign-up over HTTP: the site's request (signUpCall), changed by `call` (its headers
 * added to the request's), sent from 127.0.0.1, or from another loopback address (`from`; see
 * restFrom). Its answer as a Fetch Response either way.
 */
export async function signUpOverHttp(
  api: Api,
  email = uniqueEmail(),
  { from, ...call }: RestCall & { from?: string } = {},
): Promise<Response> {
  const site = signUpCall({ email });
  const request = { ...site, ...call, headers: { ...site.headers, ...call.headers } };
  if (!from) return rest(api, request);
  const { status, headers, body } = await restFrom(from, api, request);
  return new Response(body, {
    status,
    headers: Object.entries(headers).flatMap(([name, value]) =>
      value === undefined
        ? []
        : [[name, Array.isArray(value) ? value.join(", ") : value] as [string, string]],
    ),
  });
}

/** Where a request as SQL runs: a transaction, or a plain client's session (pg.Client). */
export interface SqlSession {
  query(text: string, params?: unknown[]): Promise<unknown>;
}

/**
 * PostgREST's settings statement for a visitor's POST to the list, its headers as JSON in $1: the
 * request's method, path and edge's headers, then anon's own settings (its 3 s statement timeout)
 * before the role, as PostgREST sets them (set_config: SET ROLE alone applies none of them); a
 * select list is evaluated in order.
 */
export const VISITOR_SETTINGS_SQL = `select set_config('request.method', 'POST', true),
  set_config('request.path', '/early_access', true), set_config('request.headers', $1, true),
  (select count(set_config(split_part(setting, '=', 1), substr(setting, strpos(setting, '=') + 1), true))
     from pg_catalog.pg_db_role_setting s, unnest(s.setconfig) setting
    where s.setrole = 'anon'::regrole
      and s.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = current_database()))),
  set_config('role', 'anon', true)`;

/** PostgREST's call of the pre-request function authenticator's settings name (request-gate.test.ts). */
export const GATE_SQL = preRequestStatement("request_gate.check_request");

/**
 * PostgREST's statement for a POST of rows (their email, a JSON array in $1) read back as the
 * site reads them (`select=email`), or with `conflict`, the column of PostgREST's
 * `?on_conflict=`, whose rows that conflict are skipped (`ON CONFLICT (…) DO NOTHING`).
 */
export const insertSql = (conflict?: string) =>
  insertStatement(
    "early_access",
    { json: "", isArray: true, columns: [{ name: "email", type: "text" }] },
    [{ column: "email", cast: null }],
    conflict ? { on: [conflict], merge: false } : null,
  ).text;

/**
 * A visitor's POST to the list as SQL, as PostgREST runs it behind Supabase's edge, in `tx`: its
 * settings (VISITOR_SETTINGS_SQL, with the edge's headers: client addresses no socket here can
 * have, and `prefer`), the pre-request gate (GATE_SQL), then its insert of the body's rows, read
 * back (insertSql, skipping those that conflict on `conflict`, as `?on_conflict=` does).
 */
export async function requestOverSqlIn(
  tx: SqlSession,
  headers: Record<string, string>,
  rows: Array<{ email: string | null }>,
  conflict?: string,
): Promise<void> {
  await tx.query(VISITOR_SETTINGS_SQL, [JSON.stringify(headers)]);
  await tx.query(GATE_SQL);
  await tx.query(insertSql(conflict), [JSON.stringify(rows)]);
}

/** A visitor's sign-up as SQL (requestOverSqlIn, one row) in `tx`. Returns the email. */
export async function signUpOverSqlIn(
  tx: SqlSession,
  headers: Record<string, string>,
  email = uniqueEmail(),
): Promise<string> {
  await requestOverSqlIn(tx, headers, [{ email }]);
  return email;
}

/**
 * A request as SQL (requestOverSqlIn) in a transaction of its own: `stored`, or the SQLSTATE it
 * failed with (`PGRST` for the rules' 429 and 400).
 */
export const requestOverSql = (
  db: Database,
  headers: Record<string, string>,
  rows: Array<{ email: string | null }>,
  conflict?: string,
) =>
  db
    .transaction((tx) => requestOverSqlIn(tx, headers, rows, conflict))
    .then(
      () => "stored",
      (error: { code: string }) => error.code,
    );

/** The same, in a transaction of its own. */
export const signUpOverSql = (db: Database, headers: Record<string, string>, email = uniqueEmail()) =>
  db.transaction((tx) => signUpOverSqlIn(tx, headers, email));

/**
 * What a clocked database (openClockedDatabase) answers a sign-up of `email` from `client` (its
 * cf-connecting-ip) at `instant`: `stored`; `429 (Retry-After n)`, or another status the rules
 * raise, with the refusal's details (which limit); or the error's SQLSTATE (`23505`, a duplicate).
 */
export function signUpOverSqlAt(
  clocked: TestDatabase,
  instant: number,
  client: string,
  email = uniqueEmail("clocked"),
): Promise<{ answer: string; details?: string }> {
  return clocked.database
    .transaction(async (tx) => {
      await atInstant(tx, instant);
      await signUpOverSqlIn(tx, { "cf-connecting-ip": client }, email);
    })
    .then(
      () => ({ answer: "stored" }),
      (error: { code: string; message: string; detail?: string }) => {
        if (error.code !== "PGRST") return { answer: error.code };
        const { details } = JSON.parse(error.message) as { details: string };
        const { status, headers } = JSON.parse(error.detail!) as {
          status: number;
          headers: Record<string, string>;
        };
        const retryAfter = headers["Retry-After"];
        return { answer: retryAfter ? `${status} (Retry-After ${retryAfter})` : String(status), details };
      },
    );
}

/** An upsert that skips a listed address, as supabase-js sends `upsert(row, { onConflict: "email", ignoreDuplicates: true })`. */
export function upsertCall(email: string): RestCall {
  return {
    method: "POST",
    path: "early_access?on_conflict=email&select=email",
    headers: { prefer: "resolution=ignore-duplicates,return=representation" },
    body: JSON.stringify({ email }),
  };
}

export const DUPLICATE_MESSAGE = 'duplicate key value violates unique constraint "early_access_email_key"';

export interface RestCall {
  method?: string;
  /** The part after /rest/v1/, query string included. */
  path?: string;
  /** Sent as apikey and as the bearer token; null sends neither; default the publishable key. */
  key?: string | null;
  headers?: Record<string, string>;
  body?: string;
}

/** Where a backend answers: a LocalSupabase, or one another process runs. */
export type Api = Pick<LocalSupabase, "url">;

/** A raw call to the REST endpoint, as anon on early_access unless told otherwise. */
export function rest(backend: Api, call: RestCall = {}) {
  const { url, method, headers, body } = resolveCall(backend, call);
  return fetch(url, { method, headers, body });
}

/** Every address on the list, read with the secret key. */
export async function listedEmails(backend: Api): Promise<string[]> {
  const response = await rest(backend, { path: "early_access?select=email", key: LOCAL_SECRET_KEY });
  expect(response.status).toBe(200);
  return ((await response.json()) as Array<{ email: string }>).map(({ email }) => email);
}

function resolveCall(
  backend: Api,
  { method = "GET", path = "early_access", key = LOCAL_PUBLISHABLE_KEY, headers = {}, body }: RestCall,
) {
  const apikey = key;
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
export function restFrom(localAddress: string, backend: Api, call: RestCall = {}) {
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
