// The errors the site and the owner's command can meet, each answered with PostgREST's status, code and exact message, with details and hint as Postgres leaves them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSupabase } from "../../tools/local-supabase/index.ts";
import { fromPostgresError } from "../../tools/local-supabase/postgrest.ts";
import { rest, startTestSupabase, uniqueEmail, type RestCall } from "../support/database.ts";

let backend: LocalSupabase;
beforeAll(async () => {
  backend = await startTestSupabase();
});
afterAll(() => backend.close());

const insert = (row: unknown, path = "early_access?select=*"): RestCall => ({
  method: "POST",
  path,
  headers: { prefer: "return=representation" },
  body: JSON.stringify(row),
});

const EMAIL_CHECK =
  'new row for relation "early_access" violates check constraint "early_access_email_check"';
const PHONE_CHECK =
  'new row for relation "early_access" violates check constraint "early_access_phone_check"';
const PERMISSION_DENIED = "permission denied for table early_access";

interface ErrorCase {
  name: string;
  call: () => RestCall;
  status: number;
  code: string;
  message: string;
  details?: string | null;
  hint?: string | null;
}

describe.each<ErrorCase>([
  // The database refuses an address without '@', whoever calls.
  {
    name: "email without @",
    call: () => insert({ email: "nobody.example.com" }),
    status: 400,
    code: "23514",
    message: EMAIL_CHECK,
  },
  // 254 characters at most.
  {
    name: "email too long",
    call: () => insert({ email: `${"a".repeat(243)}@example.com` }),
    status: 400,
    code: "23514",
    message: EMAIL_CHECK,
  },
  // An address of spaces only is empty once trimmed, and has no '@'.
  {
    name: "email of spaces",
    call: () => insert({ email: "   " }),
    status: 400,
    code: "23514",
    message: EMAIL_CHECK,
  },
  // 32 characters at most.
  {
    name: "phone too long",
    call: () => insert({ email: uniqueEmail(), phone: "1".repeat(33) }),
    status: 400,
    code: "23514",
    message: PHONE_CHECK,
  },
  // The email is required.
  {
    name: "missing email",
    call: () => insert({ phone: "1" }),
    status: 400,
    code: "23502",
    message: 'null value in column "email" of relation "early_access" violates not-null constraint',
  },
  // anon may not choose the id...
  {
    name: "anon setting id",
    call: () => insert({ id: crypto.randomUUID(), email: uniqueEmail() }),
    status: 401,
    code: "42501",
    message: PERMISSION_DENIED,
  },
  // ...nor created_at: the database records when a sign-up came.
  {
    name: "anon setting created_at",
    call: () => insert({ email: uniqueEmail(), created_at: "2020-01-01T00:00:00Z" }),
    status: 401,
    code: "42501",
    message: PERMISSION_DENIED,
  },
  // A body key that is no column, caught before any SQL runs.
  {
    name: "unknown body key",
    call: () => insert({ email: uniqueEmail(), foo: 1 }),
    status: 400,
    code: "PGRST204",
    message: "Could not find the 'foo' column of 'early_access' in the schema cache",
  },
  // The same for ?columns=.
  {
    name: "unknown column in columns",
    call: () => insert([{ email: uniqueEmail() }], 'early_access?columns="email","foo"'),
    status: 400,
    code: "PGRST204",
    message: "Could not find the 'foo' column of 'early_access' in the schema cache",
  },
  // An unknown select column is Postgres' own error, as in PostgREST.
  {
    name: "unknown select column",
    call: () => insert({ email: uniqueEmail() }, "early_access?select=email,foo"),
    status: 400,
    code: "42703",
    message: "column early_access.foo does not exist",
  },
  // PostgREST v13+ answers an unknown table from its schema cache.
  {
    name: "unknown table",
    call: () => ({ ...insert({ email: uniqueEmail() }), path: "early_acces" }),
    status: 404,
    code: "PGRST205",
    message: "Could not find the table 'public.early_acces' in the schema cache",
  },
  // A body that is not JSON.
  {
    name: "broken JSON",
    call: () => ({ method: "POST", body: '{"email": "a@b.c"' }),
    status: 400,
    code: "PGRST102",
    message: "Empty or invalid json",
  },
  // JSON nested deeper than Postgres' parser goes (a 50 KB body, 25,000 deep): it fails in the
  // parser, before any rule runs, and PostgREST answers Postgres' error as it stands, a 500.
  {
    name: "deeply nested JSON",
    call: () => ({
      method: "POST",
      path: "early_access?select=*",
      headers: { prefer: "return=representation" },
      body: `{"email":"${uniqueEmail()}","phone":${"[".repeat(25_000)}${"]".repeat(25_000)}}`,
    }),
    status: 500,
    code: "54001",
    message: "stack depth limit exceeded",
    hint: `Increase the configuration parameter "max_stack_depth" (currently 2048kB), after ensuring the platform's stack depth limit is adequate.`,
  },
  // An empty body.
  {
    name: "empty body",
    call: () => ({ method: "POST", body: "" }),
    status: 400,
    code: "PGRST102",
    message: "Empty or invalid json",
  },
  // Array elements must share their keys (unless ?columns= says which to take).
  {
    name: "mismatched array keys",
    call: () => insert([{ email: uniqueEmail() }, { email: uniqueEmail(), phone: "1" }], "early_access"),
    status: 400,
    code: "PGRST102",
    message: "All object keys must match",
  },
  // Only the public schema is exposed.
  {
    name: "unknown Content-Profile",
    call: () => ({ ...insert({ email: uniqueEmail() }), headers: { "content-profile": "private" } }),
    status: 406,
    code: "PGRST106",
    message: "Invalid schema: private",
    hint: "Only the following schemas are exposed: public",
  },
  // A filter value Postgres cannot read as the column's type.
  {
    name: "malformed uuid filter",
    call: () => ({ path: "early_access?id=eq.not-a-uuid", key: backend.secretKey }),
    status: 400,
    code: "22P02",
    message: 'invalid input syntax for type uuid: "not-a-uuid"',
  },
])("$name", ({ call, status, code, message, details = null, hint = null }) => {
  it(`answers ${status} ${code} with PostgREST's body and headers`, async () => {
    const response = await rest(backend, call());
    expect(response.status).toBe(status);
    expect(await response.text()).toBe(JSON.stringify({ code, details, hint, message }));
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("proxy-status")).toBe(`PostgREST; error=${code}`);
    expect(response.headers.get("www-authenticate")).toBe(status === 401 ? "Bearer" : null);
  });
});

describe("a refused insert", () => {
  it("stores nothing", async () => {
    const email = uniqueEmail();
    await rest(backend, insert({ email, created_at: "2020-01-01T00:00:00Z" }));
    const listed = await rest(backend, {
      path: `early_access?email=eq.${email}`,
      key: backend.secretKey,
    });
    expect(await listed.json()).toEqual([]);
  });
});

describe("SQLSTATE to HTTP status", () => {
  // Errors this schema cannot provoke through the API, mapped as PostgREST's mapSQLtoHTTP does.
  it.each([
    // Statement timeout: operator intervention, class 57.
    ["57014", "anon", 500],
    // Foreign key violation.
    ["23503", "anon", 409],
    // Undefined table.
    ["42P01", "anon", 404],
    // Insufficient privilege: 401 for anon, 403 for any other role.
    ["42501", "anon", 401],
    ["42501", "service_role", 403],
    // Value too long for a varchar: the client's fault.
    ["22001", "anon", 400],
    // Insufficient resources.
    ["53100", "anon", 503],
    // A plain `raise exception`.
    ["P0001", "anon", 400],
  ])("%s as %s gives %i", (code, role, status) => {
    const error = Object.assign(new Error("message"), { code, severity: "ERROR" });
    expect(fromPostgresError(error, role).response.status).toBe(status);
  });
});
