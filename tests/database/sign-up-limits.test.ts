// The sign-up limits, which the database enforces, so they hold on hosted Supabase too. No real
// person is refused because others share their address: past a source's normal pace a sign-up
// is stored and marked for the owner's review; only past a ceiling far above any crowd is one
// refused (429). Each limit is a leaky bucket (GCRA), keyed by a keyed hash of the address,
// never the address. What the buckets decide over time (a pure function of the stored state and
// the instant) is sign-up-buckets.test.ts's, at instants it chooses. Here, the crowds and floods are real requests,
// from 127.0.0.1 through the endpoint unless sent from another loopback address, or, for
// addresses no socket here can have, as PostgREST runs them: a transaction as anon with the
// edge's headers.
//
// The rules read every number from private.sign_up_limits, so the tests' own databases hold an
// address's limits about a hundredth of the schema's (small-limits.ts): a bucket fills with a dozen
// sign-ups, and each promise is proven at that size. That the schema's own numbers leave room for
// the crowds they are sized for is checked on the schema's table ("the schema's limits"); what a
// full-size flood costs, and that it stores its ceiling, is `npm run bench:flood`'s.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Database, Queryable } from "../../tools/local-supabase/database/database.ts";
import {
  canSendFrom,
  clientFor,
  openTestDatabase,
  rest,
  signUpOverHttp,
  signUpOverSql,
  signUpOverSqlIn,
  startTestSupabase,
  storedCount,
  uniqueEmail,
  type TestDatabase,
  type TestSupabase,
} from "../support/database.ts";
import {
  FOLLOW,
  FORGET_COUNTS,
  limitIn,
  limitsOf,
  mostThrough,
  SMALL_LIMITS,
  type Limits,
} from "./small-limits.ts";

let backend: TestSupabase;
let owner: Database;
beforeAll(async () => {
  // The small limits, not lifted as elsewhere; the gateway lets the tests' requests at once
  // through (the database's rules are what is tested here).
  backend = await startTestSupabase({ seed: SMALL_LIMITS, poolSize: 20 });
  owner = backend.owner;
});
afterAll(() => backend.close());

/** The tests' limits (SMALL_LIMITS), read from their database. */
let limits: Limits;
const limit = (kind: "pace" | "ceiling", name: string) => limitIn(limits, kind, name);
/** The pace per address per minute, the ceiling per address per hour, a network's shards. */
let PACE: number;
let CEILING: number;
let SHARDS: number;
beforeAll(async () => {
  limits = await limitsOf(owner);
  PACE = limit("pace", "per address per minute").max;
  CEILING = limit("ceiling", "per address per hour").max;
  const { rows: scopes } = await owner.query<{ shards: number }>(
    "select shards from private.sign_up_scopes where name = 'network'",
  );
  SHARDS = scopes[0]!.shards;
});

beforeEach(() => owner.exec(FORGET_COUNTS));

/** Runs `work` with one limit changed, and puts it back. */
async function withLimit(kind: string, name: string, change: string, work: () => Promise<void>) {
  const { rows } = await owner.query<{ saved: string }>(
    "select row_to_json(l)::text as saved from private.sign_up_limits l where kind = $1 and name = $2",
    [kind, name],
  );
  await owner.transaction(async (tx) => {
    await tx.query(`update private.sign_up_limits set ${change} where kind = $1 and name = $2`, [kind, name]);
    await tx.exec(FOLLOW);
  });
  try {
    await work();
  } finally {
    await owner.transaction(async (tx) => {
      await tx.query(
        `update private.sign_up_limits set (window_length, max_sign_ups) =
           (select window_length, max_sign_ups from json_populate_record(null::private.sign_up_limits, $1::json))
         where kind = $2 and name = $3`,
        [rows[0]!.saved, kind, name],
      );
      await tx.exec(FOLLOW);
    });
  }
}

/** Sends `count` sign-ups, `atOnce` at a time, from `from` (a loopback address) or 127.0.0.1. */
async function sendSignUps(count: number, { atOnce = 25, from = "", label = "crowd" } = {}) {
  const emails = Array.from({ length: count }, (_, index) => uniqueEmail(`${label}${index}`));
  const answers: Array<{ status: number; retryAfter: string | null }> = [];
  for (let start = 0; start < count; start += atOnce) {
    const batch = emails.slice(start, start + atOnce);
    answers.push(
      ...(await Promise.all(
        batch.map(async (email) => {
          const { status, headers } = await signUpOverHttp(backend, email, { from: from || undefined });
          return { status, retryAfter: headers.get("retry-after") };
        }),
      )),
    );
  }
  return { emails, answers, statuses: answers.map(({ status }) => status) };
}

interface Marked {
  email: string;
  source: string | null;
  review: string | null;
}

/** The sign-ups of these addresses with their marks, in the order they were stored. */
async function marksOf(emails: string[]): Promise<Marked[]> {
  const { rows } = await owner.query<Marked>(
    `select email, source, review from public.early_access_with_marks
      where email = any($1) order by created_at, id`,
    [emails],
  );
  return rows;
}

/** A source's key: the SHA-256 of the database's key and the client in its scope. */
async function sourceKeyOf(client: string): Promise<Buffer> {
  const { rows } = await owner.query<{ secret: Buffer }>("select secret from private.client_key_secret");
  return createHash("sha256").update(rows[0]!.secret).update(client).digest();
}

/** The short id a source's marks carry: the first 6 bytes of the address's keyed hash, in hex. */
const sourceIdOf = async (client: string) => (await sourceKeyOf(client)).toString("hex").slice(0, 12);

/**
 * Rows this connection wrote to the sources' table and has not yet reported to the server's
 * statistics (this transaction's, and its earlier ones' of the last second), refused statements
 * included: compare before and after.
 */
async function sourceWrites(tx: Queryable): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    `select (n_tup_ins + n_tup_upd + n_tup_del)::integer as n from pg_catalog.pg_stat_xact_user_tables
      where relid = 'private.sign_up_sources'::regclass`,
  );
  return rows[0]?.n ?? 0;
}

/** A sign-up in `tx` that fails, rolled back to before it; its error. */
async function failedSignUp(tx: Queryable, headers: Record<string, string>, email: string) {
  await tx.query("savepoint attempt");
  const error = await signUpOverSqlIn(tx, headers, email).then(
    () => null,
    (failure: unknown) => failure,
  );
  await tx.query("rollback to savepoint attempt");
  await tx.query("reset role");
  return error;
}

/** Resolves once a backend of `db`'s database waits for a lock another transaction holds. */
async function waitForALockWait(db: Queryable): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    const { rows } = await db.query(
      `select from pg_catalog.pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`,
    );
    if (rows.length > 0) return;
    await new Promise((resume) => setTimeout(resume, 50));
  }
  throw new Error("no backend waited for a lock within 30 s");
}

const skipUnlessLoopbackRange = async (skip: (note: string) => void) => {
  if (!(await canSendFrom("127.0.0.2"))) skip("this machine cannot send from 127.0.0.2 (macOS)");
};

/**
 * The chance that, of `count` sign-ups each counted in one of `shards` shards at random, some
 * shard gets more than `share` (a union bound over the shards of the binomial tail).
 */
function chanceAShardHoldsMore(count: number, shards: number, share: number): number {
  const p = 1 / shards;
  let logChoose = 0; // log C(count, k), from k = 0 up
  let tail = 0;
  for (let k = 1; k <= count; k++) {
    logChoose += Math.log(count - k + 1) - Math.log(k);
    if (k > share) tail += Math.exp(logChoose + k * Math.log(p) + (count - k) * Math.log(1 - p));
  }
  return shards * tail;
}

describe("the schema's limits", () => {
  /** The schema's own limits and scopes: a database with the migrations' table as it ships. */
  let schema: TestDatabase;
  let schemaLimits: Limits;
  beforeAll(async () => {
    schema = await openTestDatabase({ seed: null, poolSize: 1 });
    schemaLimits = await limitsOf(schema.owner);
  });
  afterAll(() => schema?.database.close());

  it("hold every limit the tests name, each ceiling holding more than every pace of its scope", async () => {
    const { rows } = await schema.owner.query<{ per: string; ceiling: number; pace: number }>(
      `select c.per, c.max_sign_ups as ceiling, p.max_sign_ups as pace
         from private.sign_up_limits c join private.sign_up_limits p on p.per = c.per and p.kind = 'pace'
        where c.kind = 'ceiling'`,
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const { per, ceiling, pace } of rows) expect(ceiling, per).toBeGreaterThan(pace);
    for (const [kind, name] of [
      ["pace", "per address per minute"],
      ["pace", "per address per day"],
      ["pace", "per network per hour"],
      ["ceiling", "per address per hour"],
      ["ceiling", "per address per day"],
      ["ceiling", "per network per hour"],
    ] as const) {
      expect(limitIn(schemaLimits, kind, name).max).toBeGreaterThan(0);
      // The tests' small limits keep the schema's order: the same limits, in the same scopes.
      expect(limit(kind, name).seconds).toBe(limitIn(schemaLimits, kind, name).seconds);
    }
    const { rows: scopes } = await schema.owner.query(
      "select name, ipv4_prefix as v4, ipv6_prefix as v6 from private.sign_up_scopes order by name",
    );
    expect(scopes).toEqual([
      { name: "address", v4: 32, v6: 56 },
      { name: "network", v4: 24, v6: 48 },
    ]);
  });

  it("leave room under each ceiling for the crowds they are sized for: a keynote, 300 at once and an office of 400, a venue, a carrier's NAT", () => {
    // Below, each crowd is shown stored whole up to the tests' small ceilings; here, that the
    // schema's ceilings hold each crowd of its comment within the hour it comes in.
    const hourly = limitIn(schemaLimits, "ceiling", "per address per hour").max;
    const daily = limitIn(schemaLimits, "ceiling", "per address per day").max;
    const network = limitIn(schemaLimits, "ceiling", "per network per hour").max;
    // A keynote's 150 behind one address; 300 at once, then an office of 400 the same day; a
    // venue's 300 behind one IPv6 /64 (one address: its /56).
    for (const crowd of [150, 300 + 400, 300]) {
      expect(crowd, "a crowd behind one address, within the hour").toBeLessThanOrEqual(hourly);
      expect(crowd, "a crowd behind one address, within the day").toBeLessThanOrEqual(daily);
    }
    // A day holds three such crowds.
    expect(3 * 700).toBeLessThanOrEqual(daily);
    // A carrier's 250 people from 250 addresses of one /24, and the venue's 300 of one /48: each
    // sign-up counts in one of the network's shards at random, each holding its share of the
    // ceiling; the chance that any shard gets more than its share is nil.
    for (const crowd of [250, 300]) {
      expect(crowd).toBeLessThanOrEqual(network);
      expect(
        chanceAShardHoldsMore(crowd, SHARDS, network / SHARDS),
        `${crowd} in ${SHARDS} shards`,
      ).toBeLessThan(1e-12);
    }
  });
});

describe("a crowd behind one address", () => {
  // The schema's ceilings leave room for a keynote's 150, 300 at once and an office of 400, a
  // venue's 300 ("the schema's limits"); here each crowd is the small hour's ceiling, sent in
  // batches (the keynote) and all at once (the burst): people at once, then an office, are both.
  it("a keynote: a crowd within a minute, up to the hour's ceiling, is all stored; past the minute's pace, marked with one source", async () => {
    const { emails, statuses } = await sendSignUps(CEILING, { label: "keynote" });

    expect(statuses).toEqual(Array(CEILING).fill(201));
    const marked = await marksOf(emails);
    expect(marked).toHaveLength(CEILING);
    expect(marked.filter(({ source }) => source === null)).toHaveLength(PACE);
    const past = marked.filter(({ source }) => source !== null);
    expect(new Set(past.map(({ source }) => source))).toEqual(
      new Set([await sourceIdOf("address:127.0.0.1")]),
    );
    // About the (pace + 1)th to the last of the minute (a few seconds' drain may take one off),
    // and past the day's pace, those after it too; a few may be past their network shard's share
    // of the network's pace as well (its count times the shards: an estimate).
    const reviews = past.map(({ review }) => review!);
    for (const review of reviews) {
      expect(review).toMatch(
        new RegExp(
          `^about \\d+ sign-ups per address per minute \\(pace: ${PACE}\\)` +
            `(; about \\d+ sign-ups per address per day \\(pace: ${limit("pace", "per address per day").max}\\))?` +
            `(; about \\d+ sign-ups per network per hour \\(pace: ${limit("pace", "per network per hour").max}\\))?$`,
        ),
      );
    }
    const counts = reviews.map((review) => Number(/^about (\d+)/.exec(review)![1])).sort((a, b) => a - b);
    counts.forEach((count, index) => expect(Math.abs(count - (index + PACE + 1))).toBeLessThanOrEqual(1));
    expect(reviews.filter((review) => review.includes("per day"))).toHaveLength(
      CEILING - limit("pace", "per address per day").max,
    );
  });

  it("of the hour's ceiling sent at once, exactly the first as many as the pace are unmarked", async () => {
    const { emails, statuses } = await sendSignUps(CEILING, { atOnce: CEILING, label: "burst" });

    expect(statuses).toEqual(Array(CEILING).fill(201));
    const marked = await marksOf(emails);
    expect(marked.filter(({ source }) => source === null)).toHaveLength(PACE);
    expect(marked.filter(({ source }) => source !== null)).toHaveLength(CEILING - PACE);
  });

  it("counts a sign-up when it is made, not when its transaction began: the pace's last is unmarked though it began first", async () => {
    const headers = { "cf-connecting-ip": "198.51.100.77" };
    const tenth = await owner.transaction(async (tx) => {
      // Its transaction begins (PostgreSQL's now() stops there) before the others of the pace are stored.
      await tx.query("select now()");
      for (let count = 1; count < PACE; count++) await signUpOverSql(owner, headers);
      return signUpOverSqlIn(tx, headers);
    });
    const eleventh = await signUpOverSql(owner, headers);

    expect((await marksOf([tenth, eleventh])).map(({ source }) => source !== null)).toEqual([false, true]);
  });

  it("a venue's IPv6 Wi-Fi: a crowd of addresses of one /64, up to the hour's ceiling, all stored, as one source", async () => {
    const { database, owner: venueOwner } = await openTestDatabase({ seed: SMALL_LIMITS, poolSize: CEILING });
    try {
      const emails = await Promise.all(
        Array.from({ length: CEILING }, (_, index) =>
          signUpOverSql(database, {
            "cf-connecting-ip": `2001:db8:7:ff00:${(index + 1).toString(16)}::1`,
          }),
        ),
      );
      const { rows } = await venueOwner.query<{ stored: number; unmarked: number; sources: number }>(
        `select count(*)::integer as stored,
                count(*) filter (where source is null)::integer as unmarked,
                count(distinct source)::integer as sources
           from public.early_access_with_marks where email = any($1)`,
        [emails],
      );
      expect(rows).toEqual([{ stored: CEILING, unmarked: PACE, sources: 1 }]);
    } finally {
      await database.close();
    }
  });
});

describe("a crowd behind many addresses of one network", () => {
  it("carrier NAT: 250 people from 250 addresses of one /24 within an hour are all stored", async ({
    skip,
  }) => {
    await skipUnlessLoopbackRange(skip);
    const addresses = Array.from({ length: 250 }, (_, index) => `127.0.0.${index + 2}`);
    const emails = addresses.map((address) => uniqueEmail(`nat-${address}`));
    const statuses: number[] = [];
    for (let start = 0; start < addresses.length; start += 25) {
      statuses.push(
        ...(await Promise.all(
          addresses
            .slice(start, start + 25)
            .map(
              async (address, index) =>
                (await signUpOverHttp(backend, emails[start + index], { from: address })).status,
            ),
        )),
      );
    }

    expect(statuses).toEqual(Array(250).fill(201));
    const marked = await marksOf(emails);
    // Past the network's pace of 200 an hour, each marked with its own address's source: about
    // 50, as each sign-up lands in one of the network's shards at random and is marked past that
    // shard's share (12.5), its count estimated as the shard's times 16.
    const past = marked.filter(({ source }) => source !== null);
    expect(past.length).toBeGreaterThanOrEqual(20);
    expect(past.length).toBeLessThanOrEqual(120);
    expect(new Set(past.map(({ source }) => source)).size).toBe(past.length);
    for (const { review } of past) {
      const pace = limit("pace", "per network per hour").max;
      const [, count] = new RegExp(`^about (\\d+) sign-ups per network per hour \\(pace: ${pace}\\)$`).exec(
        review!,
      )!;
      expect(Number(count) % SHARDS).toBe(0);
      expect(Number(count)).toBeGreaterThan(pace);
    }
  });
});

describe("a flood from one address", () => {
  // At the schema's size (3,000 at once against 1,000 an hour), `npm run bench:flood`.
  it("ten times its ceiling at once: its hour's ceiling stored, no more than a tenth over it plus its drip, the rest refused with 429 and Retry-After, whatever headers it forges", async () => {
    const flood = 10 * CEILING;
    const started = performance.now();
    const { emails, answers } = await sendSignUps(flood, { atOnce: 4 * CEILING, label: "flood" });
    const seconds = (performance.now() - started) / 1000;
    const stored = answers.filter(({ status }) => status === 201);
    const refused = answers.filter(({ status }) => status === 429);

    expect(stored.length + refused.length).toBe(flood);
    // Counted in its own row, under its lock, one sign-up at a time: none refused before its ceiling.
    expect(stored.length).toBeGreaterThanOrEqual(CEILING);
    expect(stored.length).toBeLessThanOrEqual(mostThrough(seconds, limit("ceiling", "per address per hour")));
    expect(await storedCount(owner, emails)).toBe(stored.length);
    for (const { retryAfter } of refused) expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);

    // The hour's bucket drips one more every hour / ceiling s: the next sign-up may be that one.
    const drip = limit("ceiling", "per address per hour").seconds / CEILING;
    let response = await signUpOverHttp(backend);
    if (response.status === 201) response = await signUpOverHttp(backend);
    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({
      code: "PT429",
      details: `At most ${CEILING} sign-ups per address per hour.`,
      hint: "Try again later.",
      message: "Too many sign-ups from this address",
    });
    expect(response.headers.get("proxy-status")).toBe("PostgREST; error=PT429");
    // It has room for one more within a drip.
    expect(Number(response.headers.get("retry-after"))).toBeLessThanOrEqual(Math.ceil(drip));

    const forgeries: Array<Record<string, string>> = [
      { "x-forwarded-for": "203.0.113.7" },
      { "cf-connecting-ip": "203.0.113.8" },
      { "x-real-ip": "203.0.113.9" },
      { "x-forwarded-for": "203.0.113.10", "cf-connecting-ip": "203.0.113.11", "x-real-ip": "203.0.113.12" },
    ];
    const forged = await Promise.all(
      forgeries.map(async (headers) => (await signUpOverHttp(backend, uniqueEmail(), { headers })).status),
    );
    expect(forged).toEqual([429, 429, 429, 429]);
  });

  it("is refused on a plain read: no row written, no lock waited for", async () => {
    const headers = { "cf-connecting-ip": "198.51.100.40" };
    await withLimit("ceiling", "per address per hour", "max_sign_ups = 2", async () => {
      for (let index = 0; index < 2; index++) await signUpOverSql(owner, headers);
      const key = await sourceKeyOf("address:198.51.100.40");
      // Another transaction holds the source's row, as a sign-up in progress would.
      await owner.transaction(async (holder) => {
        await holder.query("select from private.sign_up_sources where source_key = $1 for update", [key]);
        await owner.transaction(async (tx) => {
          await tx.exec("set local lock_timeout = '2s'");
          const before = await sourceWrites(tx);
          const error = await failedSignUp(tx, headers, uniqueEmail("refused"));
          expect(String(error)).toMatch(/"code" ?: ?"PT429"/);
          expect((await sourceWrites(tx)) - before).toBe(0);
        });
      });
    });
  });

  it("at its ceiling's edge, waits for the sign-up before it to commit, then is refused: never a sign-up past the ceiling", async () => {
    const headers = { "cf-connecting-ip": "198.51.100.41" };
    await withLimit("ceiling", "per address per hour", "max_sign_ups = 2", async () => {
      await signUpOverSql(owner, headers);
      let third: Promise<unknown> | undefined;
      await owner.transaction(async (holder) => {
        // The second sign-up, counted, not yet committed: it holds its source's row.
        const second = await signUpOverSqlIn(holder, headers);
        await holder.query("reset role");
        // A third, meanwhile: its plain read sees one sign-up, so it goes on, and waits for the
        // second's row, to be judged once that one is done. Its answer is caught at once: it may
        // arrive before the commit's, before anything here awaits it.
        third = signUpOverSql(owner, headers, uniqueEmail("edge")).catch((error: unknown) => error);
        await waitForALockWait(holder);
        return second;
      });
      expect(String(await third)).toMatch(/"code" ?: ?"PT429"/);
      const { rows } = await owner.query<{ n: number }>(
        "select count(*)::integer as n from public.early_access where email like 'edge-%'",
      );
      expect(rows[0]!.n).toBe(0);
    });
  });

  it("keeps its network's neighbours out past the network's ceiling, for a few seconds at most", async ({
    skip,
  }) => {
    await skipUnlessLoopbackRange(skip);
    // A ceiling of 3 per shard stands in for the network's 2,000: once its addresses have stored
    // 48, every shard is full (none holds more than its 3), whichever shards they landed in. Each
    // address stores at most its own hour's ceiling: enough addresses to pass the network's.
    const ceiling = 3 * SHARDS;
    const addresses = Array.from(
      { length: Math.ceil((2 * ceiling) / CEILING) },
      (_, index) => `127.0.0.${10 + index}`,
    );
    await withLimit("ceiling", "per network per hour", `max_sign_ups = ${ceiling}`, async () => {
      let stored = 0;
      for (let sent = 0; stored < ceiling && sent < 20 * ceiling; sent++) {
        const { status } = await signUpOverHttp(backend, uniqueEmail(), {
          from: addresses[sent % addresses.length],
        });
        expect([201, 429]).toContain(status);
        if (status === 201) stored++;
      }
      expect(stored).toBe(ceiling);
      const neighbour = await signUpOverHttp(backend, uniqueEmail(), { from: "127.0.0.3" });

      expect(neighbour.status).toBe(429);
      expect((await neighbour.json()).details).toBe(`At most ${ceiling} sign-ups per network per hour.`);
      // A shard's bucket of 3 an hour has room for one more every 1,200 s.
      expect(Number(neighbour.headers.get("retry-after"))).toBeLessThanOrEqual(3_600 / 3);
    });
  });
});

describe("what counts", () => {
  it("only stored sign-ups: duplicates and junk spend none of the pace", async () => {
    const taken = uniqueEmail("taken");
    expect((await signUpOverHttp(backend, taken)).status).toBe(201);
    for (let index = 0; index < PACE; index++) {
      expect((await signUpOverHttp(backend, index % 2 ? taken : "not-an-address")).status).not.toBe(201);
    }
    const { emails } = await sendSignUps(PACE - 1, { atOnce: 1, label: "after-junk" });
    expect((await marksOf(emails)).every(({ source }) => source === null)).toBe(true);
  });

  it("an email or a phone the rules refuse is refused before the limits read or write anything", async () => {
    const headers = { "cf-connecting-ip": "198.51.100.41" };
    await owner.transaction(async (tx) => {
      // The counts include this connection's earlier transactions not yet reported to the server's
      // statistics (PostgreSQL reports them at most once a second): what matters is what this adds.
      const before = await sourceWrites(tx);
      for (const email of ["not-an-address", " ".repeat(1_001), `${"a".repeat(2_000)}@example.com`]) {
        expect(String(await failedSignUp(tx, headers, email))).toMatch(/early_access_email_check/);
      }
      expect((await sourceWrites(tx)) - before).toBe(0);
      await signUpOverSqlIn(tx, headers);
      await tx.query("reset role");
      expect((await sourceWrites(tx)) - before, "a sign-up that counts: its address and its network").toBe(2);
    });
  });

  it("nothing from a client without an address: it cannot sign up, rather than share one count with all such", async () => {
    // As PostgREST would serve a request without the edge's headers (a self-hosted stack with no
    // proxy in front): the role is anon, and no header names the client.
    await expect(signUpOverSql(owner, {}, uniqueEmail("nowhere"))).rejects.toThrow(/"code" ?: ?"PT400"/);
  });

  it("is the same whatever time zone the request sets (PostgREST's Prefer: timezone)", async () => {
    const emptyAtIn = async (zone: string, address: string) =>
      owner.transaction(async (tx) => {
        await tx.query("select set_config('timezone', $1, true)", [zone]);
        await signUpOverSqlIn(tx, { "cf-connecting-ip": address });
        await tx.query("reset role");
        // Seconds from the transaction's start, and from now: the sign-up's instant lies between.
        const { rows } = await tx.query<{ seconds: Record<string, [number, number]> }>(
          `select (select jsonb_object_agg(key, jsonb_build_array(value::float8 / 1000 - extract(epoch from now())::float8,
                                                                  value::float8 / 1000 - extract(epoch from clock_timestamp())::float8))
                     from jsonb_each_text(empty_at)) as seconds
             from private.sign_up_sources where source_key = $1`,
          [await sourceKeyOf(`address:${address}`)],
        );
        return rows[0]!.seconds;
      });
    // Each limit's bucket, paces and ceilings, is empty again at the sign-up's instant plus its
    // seconds per sign-up (the rules' clock counts milliseconds).
    const expected = Object.fromEntries(
      [...limits]
        .filter(([key]) => key.includes(" per address "))
        .map(([key, { max, seconds }]) => [key, seconds / max]),
    );
    for (const [zone, address] of [
      ["UTC", "198.51.100.42"],
      ["America/New_York", "198.51.100.43"],
      ["Pacific/Chatham", "198.51.100.44"],
    ]) {
      const seconds = await emptyAtIn(zone!, address!);
      for (const [limit, interval] of Object.entries(expected)) {
        const [fromStart, fromNow] = seconds[limit]!;
        expect(fromStart).toBeGreaterThanOrEqual(interval - 1e-3);
        expect(fromNow).toBeLessThanOrEqual(interval + 1e-3);
      }
    }
  });
});

describe("the client's source", () => {
  it.each([
    // Supabase's edge (Cloudflare) names the client itself.
    [{ "cf-connecting-ip": "192.0.2.1", "x-forwarded-for": "198.51.100.1" }, "192.0.2.1", "192.0.2.0"],
    // Otherwise the entry the last proxy added: the right-most, never the client-written left-most.
    [{ "x-forwarded-for": "203.0.113.66, 192.0.2.2" }, "192.0.2.2", "192.0.2.0"],
    [{ "x-forwarded-for": " 203.0.113.66 ,  192.0.2.3 " }, "192.0.2.3", "192.0.2.0"],
    // An IPv6 address is its /56, what an ISP hands one customer, who may rotate through its
    // /64s; its network is the /48.
    [{ "cf-connecting-ip": "2001:db8:1:2:aaaa:bbbb:cccc:dddd" }, "2001:db8:1::", "2001:db8:1::"],
    [{ "cf-connecting-ip": "2001:db8:1:ff::99" }, "2001:db8:1::", "2001:db8:1::"],
    [{ "cf-connecting-ip": "2001:db8:1:100::1" }, "2001:db8:1:100::", "2001:db8:1::"],
    // An IPv4 client seen through an IPv6 socket is that IPv4 client.
    [{ "cf-connecting-ip": "::ffff:192.0.2.4" }, "192.0.2.4", "192.0.2.0"],
    // Something that is no address still counts, as itself, even what looks like one.
    [{ "cf-connecting-ip": "unknown" }, "unknown", "unknown"],
    [{ "cf-connecting-ip": "cafe" }, "cafe", "cafe"],
    [{ "cf-connecting-ip": "1.2.3" }, "1.2.3", "1.2.3"],
    [{ "x-forwarded-for": "192.0.2.5, ::1:2:3:4:5:6:7:8:9" }, "::1:2:3:4:5:6:7:8:9", "::1:2:3:4:5:6:7:8:9"],
  ])("from %j is the address %s, in the network %s", async (headers, address, network) => {
    await signUpOverSql(owner, headers);
    const { rows } = await owner.query<{ matches: boolean[] }>(
      `select array[
         exists (select from private.sign_up_sources where source_key = $1),
         exists (select from private.sign_up_sources where source_key = any($2))
       ] as matches`,
      [
        await sourceKeyOf(`address:${address}`),
        await Promise.all(
          Array.from({ length: SHARDS }, (_, shard) => sourceKeyOf(`network:${network}#${shard}`)),
        ),
      ],
    );
    expect(rows[0]!.matches).toEqual([true, true]);
  });
});

describe("privacy", () => {
  it("a source is a keyed hash, never an address, and a lone sign-up records none", async () => {
    const lone = uniqueEmail("lone");
    expect((await signUpOverHttp(backend, lone)).status).toBe(201);
    expect(await marksOf([lone])).toEqual([{ email: lone, source: null, review: null }]);

    const { emails } = await sendSignUps(PACE + 1, { atOnce: 1, label: "hashed" });
    const sources = (await marksOf(emails)).flatMap(({ source }) => (source ? [source] : []));
    expect(sources).toHaveLength(2);
    for (const source of sources) {
      expect(source).toMatch(/^[0-9a-f]{12}$/);
      expect(source).not.toBe(createHash("sha256").update("address:127.0.0.1").digest("hex").slice(0, 12));
    }
    const { rows } = await owner.query<{ text: string }>(
      "select s::text as text from private.sign_up_sources s union all select m::text from public.early_access_marks m",
    );
    for (const { text } of rows) expect(text).not.toMatch(/127\.0\.0\.1/);
  });

  it("the publishable key never sees a mark or a source, not even on the read-back of its own row", async () => {
    await sendSignUps(PACE, { atOnce: 1, label: "before" });
    const anon = clientFor(backend, backend.publishableKey);
    const email = uniqueEmail("marked");
    const { data, status } = await anon.from("early_access").insert({ email }).select();

    expect(status).toBe(201);
    expect(Object.keys(data![0]).sort()).toEqual(["created_at", "email", "id", "phone"]);
    expect((await marksOf([email]))[0]!.source).not.toBeNull();
    for (const relation of ["early_access_marks", "early_access_with_marks", "early_access_sources"]) {
      const read = await rest(backend, { path: `${relation}?select=*` });
      expect(read.status, relation).toBe(401);
      expect((await read.json()).code, relation).toBe("42501");
    }
  });
});

describe("the sources' states", () => {
  /** `count` sources whose buckets were all empty two days ago. */
  const emptySources = (count: number) =>
    owner.exec(`
      insert into private.sign_up_sources (source_key, empty_at)
      select sha256(n::text::bytea), jsonb_build_object('pace per address per minute', extract(epoch from now() - interval '2 days') * 1000)
        from generate_series(1, ${count}) n`);

  it("hold a few values each, whatever the limits' sizes", async () => {
    await sendSignUps(PACE + 5, { atOnce: 5, label: "sized" });
    const { rows } = await owner.query<{ bytes: number }>(
      "select max(pg_column_size(s))::integer as bytes from private.sign_up_sources s",
    );
    expect(rows[0]!.bytes).toBeLessThan(400);
  });

  it("are forgotten at most 32 at a time once every bucket is empty, by one sign-up in eight", async () => {
    await emptySources(5_000);
    const left = async () =>
      (
        await owner.query<{ n: number }>(
          `select count(*)::integer as n from private.sign_up_sources
            where (empty_at ->> 'pace per address per minute')::float8 < extract(epoch from now() - interval '1 day') * 1000`,
        )
      ).rows[0]!.n;
    // Which sign-ups forget is decided by their address's keyed hash: its first byte below 32.
    const forgets = async (address: string) => (await sourceKeyOf(`address:${address}`))[0]! < 32;
    const addresses = Array.from({ length: 250 }, (_, index) => `198.51.100.${index + 1}`);
    const decided = await Promise.all(
      addresses.map(async (address) => [address, await forgets(address)] as const),
    );
    const forgetting = decided.filter(([, yes]) => yes).slice(0, 5);
    const others = decided.filter(([, yes]) => !yes).slice(0, 5);
    expect(forgetting).toHaveLength(5);

    for (const [address, yes] of [...others, ...forgetting]) {
      const before = await left();
      await signUpOverSql(owner, { "cf-connecting-ip": address });
      const forgotten = before - (await left());
      if (yes) expect(forgotten, address).toBeGreaterThan(0);
      else expect(forgotten, address).toBe(0);
      expect(forgotten, address).toBeLessThanOrEqual(32);
    }
  });

  it("mark and refuse nothing while there are no limits", async () => {
    const { rows } = await owner.query<{ saved: string }>(
      "select json_agg(l)::text as saved from private.sign_up_limits l",
    );
    await owner.exec(`delete from private.sign_up_limits; ${FOLLOW}`);
    try {
      const emails: string[] = [];
      for (let index = 0; index < PACE + 5; index++) {
        emails.push(
          await signUpOverSql(owner, { "cf-connecting-ip": "198.51.100.150" }, uniqueEmail("unlimited")),
        );
      }
      expect((await marksOf(emails)).map(({ source }) => source)).toEqual(emails.map(() => null));
      // Nor any state: a crowd from one address then takes no turns on a row of its own.
      const { rows: kept } = await owner.query("select from private.sign_up_sources where source_key = $1", [
        await sourceKeyOf("address:198.51.100.150"),
      ]);
      expect(kept).toEqual([]);
    } finally {
      await owner.transaction(async (tx) => {
        await tx.query(
          "insert into private.sign_up_limits select * from json_populate_recordset(null::private.sign_up_limits, $1::json)",
          [rows[0]!.saved],
        );
        await tx.exec(FOLLOW);
      });
    }
  });

  // Whatever the statistics say: plans made while both were empty are the worst a sign-up can
  // hold, and its sign-ups forget (what looks furthest) among the sources grown behind them.
  it("are never scanned whole, nor is the list, by a connection that made its plans while both were empty", async () => {
    // A connection keeps its plans for its life, as PostgREST keeps its connections. Its own
    // database: paces of one, so that a sign-up is marked (the mark's key is checked against the
    // list), and every sign-up that adds a source forgets (its own statement).
    const { database, owner: itsOwner } = await openTestDatabase({
      seed: `update private.sign_up_limits set max_sign_ups = 1 where kind = 'pace';
             update private.sign_up_counting set forget_one_in = 1; ${FOLLOW}`,
      poolSize: 1,
    });
    const tables = ["public.early_access", "private.sign_up_sources"];
    try {
      // The list and the sources empty and their statistics saying so, as after the owner cleared
      // the list before the launch; autovacuum kept away, so that nothing makes the plans again.
      for (const table of tables)
        await itsOwner.exec(`alter table ${table} set (autovacuum_enabled = false)`);
      await itsOwner.exec(`vacuum ${tables.join(", ")}`);
      // Every way a stored sign-up goes, often enough that each plan is the one kept: a known
      // address (marked), and new ones (each adds its sources and forgets).
      for (let index = 0; index < 6; index++) {
        await signUpOverSql(database, { "cf-connecting-ip": "198.51.102.1" });
        await signUpOverSql(database, { "cf-connecting-ip": `198.51.103.${index + 1}` });
      }
      // Then a launch's first hours behind the plans' back.
      await itsOwner.exec(`
        insert into private.sign_up_sources (source_key, empty_at)
        select sha256(('grown' || n)::bytea), '{}' from generate_series(1, 20000) n;
        insert into public.early_access (email) select 'grown-' || n || '@example.com' from generate_series(1, 5000) n`);
      const rowsScanned = async (tx: Queryable) =>
        (
          await tx.query<{ table: string; rows: string }>(
            `select schemaname || '.' || relname as table, seq_tup_read as rows from pg_catalog.pg_stat_xact_user_tables
              where schemaname || '.' || relname = any ($1) order by 1`,
            [tables],
          )
        ).rows.map(({ table, rows }) => [table, Number(rows)] as const);
      for (const client of ["198.51.102.1", "198.51.103.100"]) {
        const [before, after] = await database.transaction(async (tx) => {
          const counted = await rowsScanned(tx);
          await signUpOverSqlIn(tx, { "cf-connecting-ip": client });
          await tx.query("reset role");
          return [counted, await rowsScanned(tx)];
        });
        const read = Object.fromEntries(
          after!.map(([table, rows], index) => [table, rows - before![index]![1]]),
        );
        expect(read, `rows a sign-up from ${client} read by scanning`).toEqual({
          "private.sign_up_sources": 0,
          "public.early_access": 0,
        });
      }
    } finally {
      await database.close();
    }
  });
});
