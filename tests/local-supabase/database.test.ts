// The database behind the endpoint: Supabase's roles, and each request run as PostgREST runs it
// (its own transaction, the role's own settings, the request's details as settings).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import {
  createPostgrest,
  type Postgrest,
  type RequestContext,
} from "../../tools/local-supabase/postgrest.ts";
import { openTestDatabase } from "../support/database.ts";

// `db` is what the endpoint runs on; on the real server, one connection, so that a request
// leaving something behind would show on the next. `owner` looks behind the API.
let db: Database;
let owner: Database;
let runRequest: Postgrest["asRequest"];
beforeAll(async () => {
  ({ database: db, owner } = await openTestDatabase({ poolSize: 1 }));
  runRequest = (await createPostgrest(db)).asRequest;
});
afterAll(() => db.close());

const request = (role: string, overrides: Partial<RequestContext> = {}): RequestContext => ({
  role,
  method: "POST",
  path: "/early_access",
  // The client's address, as Supabase's edge passes it on: the rules count a sign-up to it.
  headers: { apikey: "key", prefer: "return=representation", "cf-connecting-ip": "192.0.2.1" },
  ...overrides,
});

async function valueAs<T>(context: RequestContext, sql: string): Promise<T> {
  return runRequest(context, async (tx) => (await tx.query<{ value: T }>(sql)).rows[0]!.value);
}

describe("Supabase's roles", () => {
  it.each([
    // anon and authenticated are subject to row level security...
    ["anon", false],
    ["authenticated", false],
    // ...service_role is not.
    ["service_role", true],
  ])("%s exists, cannot log in, and bypasses RLS: %s", async (role, bypassesRls) => {
    const { rows } = await db.query<{ rolcanlogin: boolean; rolbypassrls: boolean }>(
      "select rolcanlogin, rolbypassrls from pg_roles where rolname = $1",
      [role],
    );
    expect(rows).toEqual([{ rolcanlogin: false, rolbypassrls: bypassesRls }]);
  });

  it("authenticator may become each of them", async () => {
    const { rows } = await db.query<{ role: string }>(
      `select r.rolname as role from pg_auth_members m
         join pg_roles r on r.oid = m.roleid
        where m.member = 'authenticator'::regrole order by 1`,
    );
    expect(rows.map(({ role }) => role)).toEqual(["anon", "authenticated", "service_role"]);
  });
});

describe("a request", () => {
  it.each([
    // Supabase's 3 s for the public key (the setting is checked, not a 3-second wait).
    ["anon", "3s"],
    // 8 s for signed-in users.
    ["authenticated", "8s"],
    // service_role has none of its own.
    ["service_role", "0"],
  ])("as %s runs with statement_timeout %s", async (role, timeout) => {
    expect(await valueAs(request(role), "select current_setting('statement_timeout') as value")).toBe(
      timeout,
    );
  });

  it.each([
    ["current_user", "anon"],
    ["current_setting('request.method')", "POST"],
    ["current_setting('request.path')", "/early_access"],
    ["current_setting('request.jwt.claims')::json->>'role'", "anon"],
    ["current_setting('search_path')", '"public", "extensions"'],
    ["current_setting('transaction_isolation')", "read committed"],
  ])("sees %s = %j", async (expression, expected) => {
    expect(await valueAs(request("anon"), `select ${expression} as value`)).toBe(expected);
  });

  it("sees the request's headers", async () => {
    const context = request("anon", { headers: { apikey: "key", "cf-connecting-ip": "198.51.100.7" } });
    expect(await valueAs(context, "select current_setting('request.headers')::json as value")).toEqual({
      apikey: "key",
      "cf-connecting-ip": "198.51.100.7",
    });
  });

  it("cannot write when it is a GET", async () => {
    const insert = valueAs(
      request("service_role", { method: "GET" }),
      "insert into early_access (email) values ('get@example.com') returning 1 as value",
    );
    await expect(insert).rejects.toMatchObject({ code: "25006" });
  });

  it("rolls back everything when it fails", async () => {
    const failing = runRequest(request("service_role"), async (tx) => {
      await tx.query("insert into early_access (email) values ('rolled-back@example.com')");
      await tx.query("select 1 / 0");
    });
    await expect(failing).rejects.toMatchObject({ code: "22012" });
    const { rows } = await owner.query("select from early_access where email = 'rolled-back@example.com'");
    expect(rows).toHaveLength(0);
  });

  it("never shares its transaction with a request that arrives meanwhile", async () => {
    const slow = runRequest(request("service_role"), async (tx) => {
      await tx.query("insert into early_access (email) values ('slow@example.com')");
      // Yields to the event loop mid-transaction, as a slower statement would, then fails.
      await new Promise((resume) => setTimeout(resume, 50));
      await tx.query("select 1 / 0");
    });
    const fast = runRequest(request("service_role"), (tx) =>
      tx.query("insert into early_access (email) values ('fast@example.com')"),
    );
    await expect(slow).rejects.toMatchObject({ code: "22012" });
    await fast;
    const { rows } = await owner.query<{ email: string }>(
      "select email from early_access where email in ('slow@example.com', 'fast@example.com')",
    );
    expect(rows).toEqual([{ email: "fast@example.com" }]);
  });

  it("leaves no setting behind for the next one", async () => {
    await valueAs(request("anon"), "select 1 as value");
    const { rows } = await db.query<{ user: string; login: string; claims: string | null }>(
      "select current_user as user, session_user as login, current_setting('request.jwt.claims', true) as claims",
    );
    // Back to the role the connection logged in as: authenticator.
    expect(rows[0]!.user).toBe(rows[0]!.login);
    expect(rows[0]!.claims || null).toBeNull();
  });
});
