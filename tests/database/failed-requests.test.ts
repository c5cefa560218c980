// Every way of asking whether an address is on the list costs what a sign-up costs: a duplicate,
// a body of several rows (either order, listed or not) and an upsert that skips a listed address
// are each counted against their source, and meet 429 where a flood of sign-ups does. No answer
// names anything but the list itself. Real requests through the endpoint, each kind from a
// loopback address of its own (Linux routes all of 127.0.0.0/8 to the loopback), with the
// schema's own limits; the failed requests' buckets over time, through the real trigger at
// instants the test sets.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import {
  canSendFrom,
  openClockedDatabase,
  restFrom,
  signUpCall,
  signUpOverHttp,
  signUpOverSql,
  signUpOverSqlAt,
  startTestSupabase,
  storedCount,
  uniqueEmail,
  upsertCall,
  type RestCall,
  type TestDatabase,
  type TestSupabase,
} from "../support/database.ts";

let backend: TestSupabase;
let owner: Database;
/** The address's ceiling with the shortest window: what failed requests are held to. */
let ceiling: { name: string; max: number; seconds: number };
beforeAll(async () => {
  backend = await startTestSupabase({ seed: null, poolSize: 20 });
  owner = backend.owner;
  const { rows } = await owner.query<{ name: string; max: number; seconds: number }>(
    `select name, max_sign_ups as max, extract(epoch from window_length)::float8 as seconds
       from private.sign_up_limits where kind = 'ceiling' and per = 'address' order by window_length limit 1`,
  );
  ceiling = rows[0]!;
});
afterAll(() => backend.close());

/** An address on the list, stored by the owner (no visitor's count spent on it). */
async function listedAddress(): Promise<string> {
  const email = uniqueEmail("listed");
  await owner.query("insert into public.early_access (email) values ($1)", [email]);
  return email;
}

const json = (body: unknown): RestCall => ({ ...signUpCall(), body: JSON.stringify(body) });

/** Each kind of asking, as a request about `probed`, with the answer it gets before its 429. */
const PROBES: Array<[string, (probed: string) => RestCall, number]> = [
  ["one-row duplicates", (probed) => json({ email: probed }), 409],
  [
    "two rows, the listed address first",
    (probed) => json([{ email: probed }, { email: uniqueEmail("probe") }]),
    400,
  ],
  [
    "two rows, the listed address second",
    (probed) => json([{ email: uniqueEmail("probe") }, { email: probed }]),
    400,
  ],
  ["upserts that ignore duplicates", (probed) => upsertCall(probed), 201],
];

describe("3,000 requests of one kind from one address", () => {
  const cases: Array<[string, (probed: string) => RestCall, number, string]> = PROBES.map(
    ([kind, probe, answer], index) => [kind, probe, answer, `127.0.3.${index + 1}`],
  );
  it.for(cases)(
    "%s: answered as such, then 429 where a flood of sign-ups meets it; nothing stored, nothing marked",
    { timeout: 120_000 },
    async ([, probe, answer, from], { skip }) => {
      if (!(await canSendFrom(from))) skip(`this machine cannot send from ${from} (macOS)`);
      const listed = await listedAddress();
      const statuses: number[] = [];
      for (let sent = 0; sent < 3_000; sent += 100) {
        statuses.push(
          ...(await Promise.all(
            Array.from({ length: 100 }, async () => (await restFrom(from, backend, probe(listed))).status),
          )),
        );
      }
      const firstRefusal = statuses.indexOf(429);

      expect(new Set(statuses.slice(0, firstRefusal))).toEqual(new Set([answer]));
      expect(firstRefusal).toBeGreaterThanOrEqual(ceiling.max);
      expect(firstRefusal).toBeLessThanOrEqual(2 * ceiling.max);
      expect(statuses.slice(firstRefusal).filter((status) => status !== 429).length).toBeLessThan(10);
      const { rows } = await owner.query<{ stored: number; marks: number }>(
        `select (select count(*) from public.early_access where email like 'probe-%')::integer as stored,
                (select count(*) from public.early_access_marks)::integer as marks`,
      );
      expect(rows[0]).toEqual({ stored: 0, marks: 0 });
    },
  );

  it("a person who meets 'already registered' once is never refused for it", async () => {
    const headers = { "cf-connecting-ip": "198.51.100.60" };
    const email = await signUpOverSql(owner, headers);
    await expect(signUpOverSql(owner, headers, email)).rejects.toThrow(/early_access_email_key/);
    const again = await Promise.all(Array.from({ length: 3 }, () => signUpOverSql(owner, headers)));
    expect(await storedCount(owner, again)).toBe(3);
  });
});

describe("the failed requests' buckets over time (a clock the test sets)", () => {
  let clocked: TestDatabase;
  beforeAll(async () => {
    clocked = await openClockedDatabase();
  });
  afterAll(() => clocked?.database.close());

  it("hold a ceiling's worth at once, then one more each time one drains", async () => {
    const launch = Date.parse("2028-01-01T09:00:00Z") / 1000;
    const listed = uniqueEmail("listed");
    await clocked.owner.query("insert into public.early_access (email) values ($1)", [listed]);
    const drip = ceiling.seconds / ceiling.max;
    const answers: string[] = [];
    for (const instant of [
      ...Array<number>(ceiling.max + 1).fill(launch),
      launch + drip + 0.01,
      launch + drip + 0.02,
    ]) {
      answers.push((await signUpOverSqlAt(clocked, instant, "10.1.0.1", listed)).answer);
    }

    expect(answers.slice(0, ceiling.max)).toEqual(Array(ceiling.max).fill("23505"));
    expect(answers.slice(ceiling.max)).toEqual([
      `429 (Retry-After ${Math.ceil(drip)})`,
      "23505",
      `429 (Retry-After ${Math.ceil(drip)})`,
    ]);
    // Sign-ups never read these buckets: the probing address still signs up.
    expect(
      (await signUpOverSqlAt(clocked, launch + drip + 0.03, "10.1.0.1", uniqueEmail("after-probes"))).answer,
    ).toBe("stored");
  }, 120_000);
});

describe("an upsert without on_conflict", () => {
  it("fails on the email's constraint, and is counted as a failed request first", async () => {
    // Hosted PostgREST takes the primary key as the conflict without `on_conflict`: its statement,
    // with the Prefer header it came with.
    const listed = await listedAddress();
    const attempt = () =>
      owner
        .transaction(async (tx) => {
          await tx.query("select set_config('role', 'anon', true), set_config('request.headers', $1, true)", [
            JSON.stringify({ "cf-connecting-ip": "198.51.100.70", prefer: "resolution=ignore-duplicates" }),
          ]);
          await tx.query(
            `insert into public.early_access (email) select body.email from json_to_record($1::json) as body (email text)
             on conflict ("id") do nothing`,
            [JSON.stringify({ email: listed })],
          );
        })
        .then(
          () => "stored",
          (error: { code: string }) => error.code,
        );
    const answers: string[] = [];
    for (let sent = 0; sent < ceiling.max + 1; sent += 50) {
      answers.push(...(await Promise.all(Array.from({ length: 50 }, attempt))));
    }

    expect(answers.slice(0, ceiling.max)).toEqual(Array(ceiling.max).fill("23505"));
    expect(answers.slice(ceiling.max)).toContain("PGRST");
  }, 120_000);
});

describe("an upsert that skips a listed address", () => {
  it("leaves no mark and names nothing internal, past the pace too, and counts as a sign-up", async ({
    skip,
  }) => {
    const from = "127.0.4.1";
    if (!(await canSendFrom(from))) skip(`this machine cannot send from ${from} (macOS)`);
    const listed = await listedAddress();
    const answers = [];
    for (let index = 0; index < 30; index++) answers.push(await restFrom(from, backend, upsertCall(listed)));

    expect(answers.map(({ status, body }) => [status, body])).toEqual(Array(30).fill([201, "[]"]));
    const { rows } = await owner.query<{ marks: number }>(
      "select count(*)::integer as marks from public.early_access_marks m join public.early_access e on e.id = m.sign_up_id where e.email = $1",
      [listed],
    );
    expect(rows[0]!.marks).toBe(0);
    // Counted as sign-ups are: the source's minute is past its pace, so the next real sign-up is marked.
    const next = uniqueEmail("after-upserts");
    expect((await signUpOverHttp(backend, next, { from })).status).toBe(201);
    const { rows: marked } = await owner.query<{ reason: string }>(
      "select m.reason from public.early_access_marks m join public.early_access e on e.id = m.sign_up_id where e.email = $1",
      [next],
    );
    expect(marked[0]?.reason).toMatch(/sign-ups per address per minute/);
  });
});

describe("no answer names anything but the list", () => {
  /** Names of what lives behind the list: its schema, its other tables, functions, sequences, constraints. */
  const INTERNAL =
    /private|early_access_marks|sign_up_|failed_requests|client_key|admit|check_sign_up|record_mark|_fkey|_pkey/;

  it("whatever the rules refuse, and however the request is formed", async ({ skip }) => {
    const [from, other] = ["127.0.5.1", "127.0.6.1"];
    if (!(await canSendFrom(from))) skip(`this machine cannot send from ${from} (macOS)`);
    // Paces of one and ceilings of two, so that each kind of mark and refusal comes within a few requests.
    const small = await startTestSupabase({
      seed: "update private.sign_up_limits set max_sign_ups = case kind when 'pace' then 1 else 2 end",
    });
    try {
      const listed = uniqueEmail("listed");
      await small.owner.query("insert into public.early_access (email) values ($1)", [listed]);
      // From two addresses, in an order that meets each answer: one fills its failed requests'
      // bucket, the other its sign-ups' (with an upsert past its pace).
      const calls: Array<[string, RestCall]> = [
        [from, json({ email: listed })],
        [from, json([{ email: listed }, { email: uniqueEmail() }])],
        [from, json([{ email: uniqueEmail() }, { email: listed }])],
        [from, json({ email: listed })],
        [other, json({ email: "not-an-address" })],
        [other, json({ email: uniqueEmail(), phone: "\u200b" })],
        [other, json({ email: `${"a".repeat(2_000)}@example.com` })],
        [other, json({ email: null })],
        [other, json({ email: uniqueEmail(), id: "00000000-0000-4000-8000-000000000000" })],
        [other, json({ email: uniqueEmail() })],
        ...Array.from({ length: 3 }, () => [other, upsertCall(listed)] as [string, RestCall]),
      ];
      const answers = [];
      for (const [address, call] of calls) {
        const { status, body } = await restFrom(address, small, call);
        answers.push({ status, body });
      }
      // Every kind of answer came: checks, not null, privileges, one row, duplicates, refusals.
      expect(new Set(answers.map(({ status }) => status))).toEqual(new Set([400, 401, 409, 201, 429]));
      for (const { body } of answers) expect(body).not.toMatch(INTERNAL);

      // A request that names no client, as hosted PostgREST would serve one with no proxy in front.
      const nowhere = await signUpOverSql(small.owner, {}).catch((error: Error) => error.message);
      expect(nowhere).toMatch(/PT400/);
      expect(nowhere).not.toMatch(INTERNAL);
    } finally {
      await small.close();
    }
  });
});
