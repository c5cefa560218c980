// The site reads back the row it has just added (`insert().select()`); no visitor may ever
// read anyone else's. The first migration keyed that read-back to the transaction's start
// time (`created_at = now()`), which transactions starting at the same instant share: it
// leaked other visitors' emails and phones. These tests drive PostgREST's own request path
// (without HTTP in between, so requests follow each other as closely as PostgREST's do). The
// public key may not list the table at all (05_request_gate.sql); the reads beside the sign-ups
// run as anon past that gate, so that the policies hold by themselves too.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { createPostgrest, type Postgrest } from "../../tools/local-supabase/postgrest.ts";
import { openTestDatabase, uniqueEmail } from "../support/database.ts";

interface Row {
  email: string;
}

let database: Database;
let postgrest: Postgrest;
beforeAll(async () => {
  // Every visitor comes from an address of its own (below), so the migration's own limits hold.
  ({ database } = await openTestDatabase({ poolSize: 100, seed: null }));
  postgrest = await createPostgrest(database);
});
afterAll(() => database.close());
afterEach(() => vi.useRealTimers());

/**
 * The sign-up of `visitor`, as the edge reports its address (198.18/15 is for tests), 128
 * visitors to a /24, within the network's hourly cap.
 */
async function signUp(visitor: number, email: string): Promise<Row[]> {
  const response = await postgrest.handle({
    method: "POST",
    path: "/early_access",
    query: new URLSearchParams({ select: "*" }),
    headers: {
      prefer: "return=representation",
      "cf-connecting-ip": `198.18.${visitor >> 7}.${visitor & 127}`,
    },
    body: Buffer.from(JSON.stringify({ email })),
    role: "anon",
  });
  expect(response.status, response.body).toBe(201);
  return JSON.parse(response.body) as Row[];
}

/** The whole table, read as anon in a transaction of its own, as a GET past the gate would. */
async function listAsAnon(): Promise<Row[]> {
  return database.transaction(async (tx) => {
    await tx.query("select set_config('role', 'anon', true)");
    return (await tx.query<Row>("select * from public.early_access")).rows;
  });
}

/** Visitors `from`..`from + count - 1` each sign up while another request lists the table. */
async function visitAtOnce(from: number, count: number) {
  return Promise.all(
    Array.from({ length: count }, async (_, offset) => {
      const visitor = from + offset;
      const email = uniqueEmail(`reader${visitor}`);
      const [inserted, listed] = await Promise.all([signUp(visitor, email), listAsAnon()]);
      return { email, inserted, listed };
    }),
  );
}

function expectOnlyOwnRows(visits: Awaited<ReturnType<typeof visitAtOnce>>) {
  const foreign = visits.flatMap(({ email, inserted, listed }) =>
    [...inserted, ...listed].filter((row) => row.email !== email),
  );
  expect(foreign, `${foreign.length} rows of other visitors were read`).toEqual([]);
  const misses = visits.filter(
    ({ email, inserted }) => inserted.length !== 1 || inserted[0]!.email !== email,
  );
  expect(misses, `${misses.length} sign-ups did not read back exactly their own row`).toEqual([]);
}

describe("a visitor never reads another visitor's sign-up", () => {
  const visitors = 3000;
  it(`with ${visitors} sign-ups and as many anonymous reads, 100 at a time`, async () => {
    const visits = [];
    for (let from = 1000; from < 1000 + visitors; from += 100) visits.push(...(await visitAtOnce(from, 100)));
    expectOnlyOwnRows(visits);
  });
});

describe("a visitor's read-back", () => {
  it("is one index lookup, so reads cannot slow sign-ups down however long the list grows", async () => {
    // Planners prefer scanning a small table; forbidding that shows whether the policy allows
    // anything else. A policy the index cannot serve leaves a scan of every row.
    const plan = await postgrest.asRequest(
      {
        role: "anon",
        method: "POST",
        path: "/early_access",
        headers: { "cf-connecting-ip": "198.18.255.1" },
      },
      async (tx) => {
        await tx.query("set local enable_seqscan = off");
        const { rows } = await tx.query<Record<string, unknown>>("explain select * from public.early_access");
        return rows.map((row) => Object.values(row)[0]).join("\n");
      },
    );
    expect(plan).toMatch(/Index (Only )?Scan/);
    expect(plan).not.toMatch(/Seq Scan/);
  });
});
