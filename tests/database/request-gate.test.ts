// The gate before every request (supabase/schemas/05_request_gate.sql), as PostgREST runs it: in
// the request's transaction, after the request's settings, before its statement. The public key
// (anon, authenticated) may only sign up; the secret key (service_role) and the owner pass. What
// the gate spares the server: a read's plan, whose regular expression alone costs seconds.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Database, Queryable } from "../../tools/local-supabase/database/database.ts";
import { openTestDatabase } from "../support/database.ts";

const major = inject("postgresMajor");
const GATE_REFUSAL = "permission denied: this key may only add a sign-up (POST /early_access)";
/** A regular expression whose compilation takes seconds: PostgREST's `?email=match.<this>`. */
const CATASTROPHIC = "((a?){1,30}){1,30}";

let database: Database;
let owner: Database;
beforeAll(async () => {
  ({ database, owner } = await openTestDatabase());
});
afterAll(() => database.close());

/** The settings PostgREST sets before the gate (PreQuery.hs), as anon's request from an address. */
async function asRequest(tx: Queryable, role: string, method: string, path: string): Promise<void> {
  await tx.query(
    `select set_config('role', $1, true), set_config('request.method', $2, true),
            set_config('request.path', $3, true), set_config('request.headers', $4, true)`,
    [role, method, path, JSON.stringify({ "cf-connecting-ip": "203.0.113.9" })],
  );
}

/** What the gate answers a request: `passes`, or the SQLSTATE and message it raises. */
function gate(role: string, method: string, path: string): Promise<string> {
  return database
    .transaction(async (tx) => {
      await asRequest(tx, role, method, path);
      await tx.query("select request_gate.check_request()");
    })
    .then(
      () => "passes",
      (error: { code: string; message: string }) => `${error.code} ${error.message}`,
    );
}

describe(`the gate, on PostgreSQL ${major}`, () => {
  it("is PostgREST's pre-request function, in authenticator's settings", async () => {
    const { rows } = await owner.query<{ setting: string }>(
      `select c as setting from pg_catalog.pg_db_role_setting s, unnest(s.setconfig) c
        where s.setrole = 'authenticator'::regrole and c like 'pgrst.%'`,
    );
    expect(rows).toEqual([{ setting: "pgrst.db_pre_request=request_gate.check_request" }]);
  });

  it.each(["anon", "authenticated"])("lets %s sign up: a POST to /early_access", async (role) => {
    expect(await gate(role, "POST", "/early_access")).toBe("passes");
  });

  it.each(
    ["anon", "authenticated"].flatMap((role): Array<[string, string, string]> => [
      ...["GET", "HEAD", "PATCH", "PUT", "DELETE"].map((method): [string, string, string] => [
        role,
        method,
        "/early_access",
      ]),
      // Other relations of the exposed schema (the owner's), functions, the schema's root.
      [role, "POST", "/early_access_marks"],
      [role, "GET", "/early_access_with_marks"],
      [role, "POST", "/rpc/anything"],
      [role, "GET", "/"],
      // A path PostgREST reads as early_access, spelt otherwise: refused, not guessed at.
      [role, "POST", "/early%5Faccess"],
    ]),
  )("refuses %s's %s %s with 42501 (PostgREST: 401 for anon, 403 signed in)", async (role, method, path) => {
    expect(await gate(role, method, path)).toBe(`42501 ${GATE_REFUSAL}`);
  });

  it.each([
    ["GET", "/early_access"],
    ["DELETE", "/early_access"],
    ["POST", "/rpc/anything"],
  ])("lets the secret key's service_role through: %s %s", async (method, path) => {
    expect(await gate("service_role", method, path)).toBe("passes");
  });

  it("lets the owner through, who runs no request at all", async () => {
    await owner.transaction(async (tx) => {
      await tx.query("select set_config('request.method', 'GET', true)");
      await tx.query("select request_gate.check_request()");
    });
  });

  it("refuses a read before its statement is planned: the plan alone would cost seconds", async () => {
    const read = `select * from public.early_access where email ~ '${CATASTROPHIC}'`;
    // Without the gate: planning anon's read (explain runs nothing) outlasts a quarter second.
    const planned = database.transaction(async (tx) => {
      await asRequest(tx, "anon", "GET", "/early_access");
      await tx.query("set local statement_timeout = 250");
      await tx.query(`explain ${read}`);
    });
    await expect(planned, "the regular expression is compiled while planning").rejects.toMatchObject({
      code: "57014",
    });

    // With it, as PostgREST runs the request: the gate refuses, and the transaction runs nothing more.
    let reached = false;
    const started = performance.now();
    const refused = database.transaction(async (tx) => {
      await asRequest(tx, "anon", "GET", "/early_access");
      await tx.query("select request_gate.check_request()");
      reached = true;
      await tx.query(read);
    });
    await expect(refused).rejects.toMatchObject({ code: "42501", message: GATE_REFUSAL });
    const ms = performance.now() - started;
    console.log(`PostgreSQL ${major}: the gate refused anon's catastrophic read in ${ms.toFixed(1)} ms`);
    expect(reached).toBe(false);
  });
});
