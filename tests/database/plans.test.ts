// A sign-up's plans are right on any PostgreSQL, JIT or not. A server built with LLVM (Debian's,
// the official Docker image's) compiles every statement whose estimated cost passes
// `jit_above_cost`, at a quarter of a second a sign-up; Supabase's builds and the embedded ones
// these tests run on have no JIT, so what is proven here is what decides it on every build: no
// statement a sign-up runs, nested in the rules or not, is estimated at or past that cost.
// auto_explain hands every plan's estimate to the test, for each way a request can go.
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SUPERUSER } from "../../tools/local-supabase/database/cluster.ts";
import {
  openTestDatabase,
  requestOverSqlIn,
  testServerUrl,
  uniqueEmail,
  type TestDatabase,
} from "../support/database.ts";
import { EVERY_STEP } from "./small-limits.ts";

let test: TestDatabase;
let session: pg.Client;
/** Each statement's plan, as auto_explain reports it: its text and the estimate of its whole. */
const plans: Array<{ statement: string; cost: number }> = [];

beforeAll(async () => {
  // Every statement of the rules runs within a few sign-ups.
  test = await openTestDatabase({ seed: EVERY_STEP });
  const { rows } = await test.owner.query<{ name: string }>("select current_database() as name");
  // auto_explain is loaded by the server's superuser, for this session only.
  session = new pg.Client({ connectionString: testServerUrl(SUPERUSER, rows[0]!.name) });
  await session.connect();
  session.on("notice", ({ message = "" }) => {
    const json = message.slice(message.indexOf("{"));
    if (!message.startsWith("duration:")) return;
    const { "Query Text": statement, Plan: plan } = JSON.parse(json) as {
      "Query Text": string;
      Plan: { "Total Cost": number };
    };
    plans.push({ statement, cost: plan["Total Cost"] });
  });
  await session.query(`
    load 'auto_explain';
    set auto_explain.log_min_duration = 0;
    set auto_explain.log_nested_statements = on;
    set auto_explain.log_format = json;
    set auto_explain.log_level = notice;
    set client_min_messages = notice`);
});
afterAll(async () => {
  await session?.end();
  await test?.database.close();
});

/** A visitor's request as PostgREST runs it (requestOverSqlIn), on the session; its error's code, if any. */
async function request(client: string, onConflict: string, rows: Array<{ email: string }>, prefer = "") {
  await session.query("begin");
  try {
    await requestOverSqlIn(session, { "cf-connecting-ip": client, prefer }, rows, onConflict);
    await session.query("commit");
    return "stored";
  } catch (error) {
    await session.query("rollback");
    return (error as { code: string }).code;
  }
}

it("no statement of a sign-up is estimated at PostgreSQL's threshold for compiling it", async () => {
  const listed = uniqueEmail("listed");
  const answers = [
    await request("192.0.2.1", "", [{ email: listed }]), // a new client
    await request("192.0.2.1", "", [{ email: uniqueEmail() }]), // a known one, past its pace
    await request("192.0.2.1", "", [{ email: listed }]), // a duplicate, held back
    await request("192.0.2.1", "email", [{ email: listed }], "resolution=ignore-duplicates"),
    await request("192.0.2.1", "", [{ email: uniqueEmail() }, { email: uniqueEmail() }]), // two rows
    await request("192.0.2.1", "", [{ email: uniqueEmail() }]), // its third sign-up, the ceiling's last
    await request("192.0.2.1", "", [{ email: uniqueEmail() }]), // past its ceiling, on a plain read
    await request("192.0.2.1", "", [{ email: listed }]), // a failure past its ceiling
    await request("198.51.100.1", "", [{ email: uniqueEmail() }]), // a client that adds sources and forgets some
  ];
  expect(answers).toEqual([
    "stored",
    "stored",
    "23505",
    "stored",
    "P0001",
    "stored",
    "PGRST",
    "PGRST",
    "stored",
  ]);

  const { rows } = await session.query<{ threshold: number }>(
    "select current_setting('jit_above_cost')::float8 as threshold",
  );
  const threshold = rows[0]!.threshold;
  // Every step of the rules was planned and reported: the scopes' buckets, the sources read and locked,
  // the mark, the forgetting, and a failure's charge (its ceilings in order; its cells' columns
  // and nextval are plain PL/pgSQL expressions, which no plan holds).
  const statements = plans.map(({ statement }) => statement).join("\n");
  for (const step of [
    "private.sign_up_buckets",
    "for update",
    "early_access_marks",
    "for update of source skip locked",
    "charge_order",
  ]) {
    expect(statements).toContain(step);
  }
  const costly = plans.filter(({ cost }) => cost >= threshold);
  expect(costly, `statements estimated at ${threshold} or more`).toEqual([]);
});
