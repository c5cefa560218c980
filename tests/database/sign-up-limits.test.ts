// The sign-up limits, which the database enforces, so they hold on hosted Supabase too. No real
// person is refused because others share their address: past a source's normal pace a sign-up
// is stored and marked for the owner's review; only past a ceiling far above any crowd is one
// refused (429). Each limit is a leaky bucket (GCRA), keyed by a keyed hash of the address,
// never the address. What the buckets decide over time is a pure function of the stored state
// and the instant: those tests choose their instants. The crowds and floods are real requests,
// from 127.0.0.1 through the endpoint unless sent from another loopback address, or, for
// addresses no socket here can have, as PostgREST runs them: a transaction as anon with the
// edge's headers.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Database, Queryable } from "../../tools/local-supabase/database/database.ts";
import {
  atInstant,
  canSendFrom,
  clientFor,
  openClockedDatabase,
  openTestDatabase,
  rest,
  restFrom,
  signUpAsVisitor,
  signUpCall,
  signUpWithHeaders,
  startTestSupabase,
  storedCount,
  uniqueEmail,
  type TestDatabase,
  type TestSupabase,
} from "../support/database.ts";

let backend: TestSupabase;
let owner: Database;
beforeAll(async () => {
  // The migration's own limits, not lifted as elsewhere; the gateway lets the tests' hundreds of
  // requests at once through (the database's rules are what is tested here).
  backend = await startTestSupabase({ seed: null, poolSize: 20 });
  owner = backend.owner;
});
afterAll(() => backend.close());

/** A limit of the schema's table: at most `max` sign-ups per `seconds`. */
interface Limit {
  max: number;
  seconds: number;
}
/** The schema's limits, read from the database, by `kind name` (the rules' own numbers). */
let limits: Map<string, Limit>;
const limit = (kind: "pace" | "ceiling", name: string): Limit => {
  const found = limits.get(`${kind} ${name}`);
  if (!found) throw new Error(`no limit ${kind} ${name}`);
  return found;
};
/** The pace per address per minute, the ceiling per address per hour, a network's shards. */
let PACE: number;
let CEILING: number;
let SHARDS: number;
beforeAll(async () => {
  const { rows } = await owner.query<{ key: string; max: number; seconds: number }>(
    `select kind || ' ' || name as key, max_sign_ups as max, extract(epoch from window_length)::float8 as seconds
       from private.sign_up_limits`,
  );
  limits = new Map(rows.map(({ key, max, seconds }) => [key, { max, seconds }]));
  PACE = limit("pace", "per address per minute").max;
  CEILING = limit("ceiling", "per address per hour").max;
  const { rows: scopes } = await owner.query<{ shards: number }>(
    "select shards from private.sign_up_scopes where name = 'network'",
  );
  SHARDS = scopes[0]!.shards;
});

beforeEach(() => owner.exec("truncate private.sign_up_sources"));

/** One visitor's sign-up, as the request the site sends. */
const oneSignUp = (email = uniqueEmail()) => signUpCall({ email });

/** Runs `work` with one limit changed, and puts it back. */
async function withLimit(kind: string, name: string, change: string, work: () => Promise<void>) {
  const { rows } = await owner.query<{ saved: string }>(
    "select row_to_json(l)::text as saved from private.sign_up_limits l where kind = $1 and name = $2",
    [kind, name],
  );
  await owner.query(`update private.sign_up_limits set ${change} where kind = $1 and name = $2`, [
    kind,
    name,
  ]);
  try {
    await work();
  } finally {
    await owner.query(
      `update private.sign_up_limits set (window_length, max_sign_ups) =
         (select window_length, max_sign_ups from json_populate_record(null::private.sign_up_limits, $1::json))
       where kind = $2 and name = $3`,
      [rows[0]!.saved, kind, name],
    );
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
          if (from) {
            const { status, headers } = await restFrom(from, backend, oneSignUp(email));
            return { status, retryAfter: (headers["retry-after"] as string | undefined) ?? null };
          }
          const { status, headers } = await rest(backend, oneSignUp(email));
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
  const error = await signUpAsVisitor(tx, headers, email).then(
    () => null,
    (failure: unknown) => failure,
  );
  await tx.query("rollback to savepoint attempt");
  await tx.query("reset role");
  return error;
}

const skipUnlessLoopbackRange = async (skip: (note: string) => void) => {
  if (!(await canSendFrom("127.0.0.2"))) skip("this machine cannot send from 127.0.0.2 (macOS)");
};

describe("the schema's limits", () => {
  it("hold every limit the tests name, each ceiling holding more than every pace of its scope", async () => {
    const { rows } = await owner.query<{ per: string; ceiling: number; pace: number }>(
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
      expect(limit(kind, name).max).toBeGreaterThan(0);
    }
    const { rows: scopes } = await owner.query(
      "select name, ipv4_prefix as v4, ipv6_prefix as v6 from private.sign_up_scopes order by name",
    );
    expect(scopes).toEqual([
      { name: "address", v4: 32, v6: 56 },
      { name: "network", v4: 24, v6: 48 },
    ]);
  });
});

/**
 * The buckets over time, through the real trigger at instants the test chooses: real sign-ups
 * (each a transaction of its own, as anon with the edge's headers, as PostgREST runs them) in a
 * database of their own whose rules' clock, private.sign_up_clock(), reads the instant each
 * transaction sets; the one thing faked is the clock. There, a network counts in one shard, so
 * that its counts are exact (the shards are tested with real requests below), and each test
 * signs up from a network of its own.
 */
let clocked: TestDatabase;
beforeAll(async () => {
  clocked = await openClockedDatabase("update private.sign_up_scopes set shards = 1 where name = 'network';");
});
afterAll(() => clocked?.database.close());

/**
 * Sign-ups from `client`, one at each of `instants` (seconds since 1970), in order. Each answer:
 * `refused: <details> (Retry-After n)`, `marked: <reasons>` or `stored`.
 */
async function signUpsAt(instants: number[], client: string): Promise<string[]> {
  const answers: string[] = [];
  for (const instant of instants) {
    const email = uniqueEmail("clocked");
    const refusal = await clocked.database
      .transaction(async (tx) => {
        await atInstant(tx, instant);
        await signUpAsVisitor(tx, { "cf-connecting-ip": client }, email);
      })
      .then(
        () => null,
        (error: { message: string; detail?: string }) => {
          const { details } = JSON.parse(error.message) as { details: string };
          const retryAfter = JSON.parse(error.detail!).headers["Retry-After"] as string;
          return `refused: ${details.replace(/^At most/, "at most").replace(/\.$/, "")} (Retry-After ${retryAfter})`;
        },
      );
    if (refusal) {
      answers.push(refusal);
      continue;
    }
    const { rows } = await clocked.owner.query<{ reason: string }>(
      `select m.reason from public.early_access_marks m join public.early_access e on e.id = m.sign_up_id
        where e.email = $1`,
      [email],
    );
    answers.push(rows[0] ? `marked: ${rows[0].reason}` : "stored");
  }
  return answers;
}

/** How many times each answer came, in the order each first came. */
function tally(answers: string[]): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const answer of answers) counts.set(answer, (counts.get(answer) ?? 0) + 1);
  return [...counts];
}

const at = (count: number, instant: number) => Array<number>(count).fill(instant);
/** Seconds since 1970 of a launch morning. */
const LAUNCH = Date.parse("2028-01-01T09:00:00Z") / 1000;

describe("the buckets over time (a clock the test sets)", () => {
  it("a flood at one instant: the hour's ceiling stored, then refused until its bucket has room for one more", async () => {
    const { max: pace } = limit("pace", "per address per minute");
    const { max: ceiling, seconds: hour } = limit("ceiling", "per address per hour");
    const { max: dailyPace } = limit("pace", "per address per day");
    const { max: networkPace } = limit("pace", "per network per hour");
    // One more every hour / ceiling seconds (3.6 s for 1,000 an hour).
    const drip = hour / ceiling;
    const answers = await signUpsAt(
      [...at(ceiling + 1, LAUNCH), LAUNCH + drip - 0.1, LAUNCH + drip + 0.01, LAUNCH + drip + 0.02],
      "10.0.10.1",
    );

    expect(answers.slice(0, pace)).toEqual(at(pace, 0).map(() => "stored"));
    expect(answers[pace]).toBe(`marked: about ${pace + 1} sign-ups per address per minute (pace: ${pace})`);
    expect(answers[ceiling - 1]).toBe(
      `marked: about ${ceiling} sign-ups per address per minute (pace: ${pace}); ` +
        `about ${ceiling} sign-ups per address per day (pace: ${dailyPace}); ` +
        `about ${ceiling} sign-ups per network per hour (pace: ${networkPace})`,
    );
    const refused = `refused: at most ${ceiling} sign-ups per address per hour`;
    expect(answers.slice(ceiling)).toEqual([
      `${refused} (Retry-After ${Math.ceil(drip)})`,
      `${refused} (Retry-After 1)`,
      expect.stringMatching(/^marked: /),
      `${refused} (Retry-After ${Math.ceil(drip)})`,
    ]);
  }, 120_000);

  it("a sign-up per pace's interval is unmarked until the day's pace; one a second, after the minute's pace and one", async () => {
    const { max: pace, seconds: minute } = limit("pace", "per address per minute");
    const { max: dailyPace } = limit("pace", "per address per day");
    const interval = minute / pace;
    const steady = await signUpsAt(
      Array.from({ length: dailyPace + 1 }, (_, index) => LAUNCH + interval * index),
      "10.0.11.1",
    );
    expect(steady.slice(0, dailyPace)).toEqual(at(dailyPace, 0).map(() => "stored"));
    expect(steady[dailyPace]).toBe(
      `marked: about ${dailyPace} sign-ups per address per day (pace: ${dailyPace})`,
    );

    const faster = await signUpsAt(
      Array.from({ length: 30 }, (_, index) => LAUNCH + index),
      "10.0.12.1",
    );
    // The minute's bucket drains one every 6 s: the 12th sign-up in 11 s is past its 10, and
    // every one after stays past it (marked sign-ups count too).
    expect(faster.slice(0, pace + 1)).toEqual(at(pace + 1, 0).map(() => "stored"));
    expect(faster[pace + 1]).toBe(`marked: about ${pace} sign-ups per address per minute (pace: ${pace})`);
    expect(faster[29]).toBe(`marked: about 25 sign-ups per address per minute (pace: ${pace})`);
  });

  it("holds at most N + N·t/W in any span t: a sign-up every second for an hour stores at most twice the hour's ceiling", async () => {
    const { max: ceiling, seconds: hour } = limit("ceiling", "per address per hour");
    const answers = await signUpsAt(
      Array.from({ length: hour }, (_, index) => LAUNCH + index),
      "10.0.13.1",
    );
    const stored = answers.filter((answer) => !answer.startsWith("refused")).length;

    // The hour's bucket fills after ceiling / (1 − ceiling / hour) s, then takes one every
    // hour / ceiling s.
    expect(stored).toBeGreaterThanOrEqual(2 * ceiling - 10);
    expect(stored).toBeLessThanOrEqual(2 * ceiling);
  }, 180_000);

  it("the day's ceiling: the hour's ceiling at the top of each hour, until the day's is reached", async () => {
    const { max: hourly } = limit("ceiling", "per address per hour");
    const { max: daily, seconds: day } = limit("ceiling", "per address per day");
    const hours = Math.ceil(daily / hourly);
    const answers = await signUpsAt(
      Array.from({ length: hours + 1 }, (_, hour) => at(hourly, LAUNCH + 3_600 * hour)).flat(),
      "10.0.14.1",
    );
    const last = answers.slice(hours * hourly);

    expect(answers.slice(0, hours * hourly).filter((answer) => answer.startsWith("refused"))).toEqual([]);
    // The day's bucket drains one every day / daily s: what drained in those hours fits, then no more.
    const drained = Math.floor((hours * 3_600) / (day / daily));
    expect(tally(last.map((answer) => answer.replace(/^marked: .*/, "marked")))).toEqual([
      ["marked", drained],
      [
        `refused: at most ${daily} sign-ups per address per day (Retry-After ${Math.ceil(day / daily)})`,
        hourly - drained,
      ],
    ]);
  }, 180_000);
});

describe("a crowd behind one address", () => {
  it("a keynote: 150 people within a minute are all stored; past the first 10, marked with one source", async () => {
    const { emails, statuses } = await sendSignUps(150, { label: "keynote" });

    expect(statuses).toEqual(Array(150).fill(201));
    const marked = await marksOf(emails);
    expect(marked).toHaveLength(150);
    expect(marked.filter(({ source }) => source === null)).toHaveLength(PACE);
    const past = marked.filter(({ source }) => source !== null);
    expect(new Set(past.map(({ source }) => source))).toEqual(
      new Set([await sourceIdOf("address:127.0.0.1")]),
    );
    // About the 11th to the 150th of the minute (a few seconds' drain may take one off), and
    // from the 101st on past the day's pace too; a few may be past their network shard's share
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
      150 - limit("pace", "per address per day").max,
    );
  });

  it("of 40 sent at once, exactly the first 10 are unmarked", async () => {
    const { emails, statuses } = await sendSignUps(40, { atOnce: 40, label: "burst" });

    expect(statuses).toEqual(Array(40).fill(201));
    const marked = await marksOf(emails);
    expect(marked.filter(({ source }) => source === null)).toHaveLength(PACE);
    expect(marked.filter(({ source }) => source !== null)).toHaveLength(40 - PACE);
  });

  it("counts a sign-up when it is made, not when its transaction began: the tenth is unmarked though it began first", async () => {
    const headers = { "cf-connecting-ip": "198.51.100.77" };
    const tenth = await owner.transaction(async (tx) => {
      // Its transaction begins (PostgreSQL's now() stops there) before the other nine are stored.
      await tx.query("select now()");
      for (let count = 1; count < PACE; count++) await signUpWithHeaders(owner, headers);
      return signUpAsVisitor(tx, headers);
    });
    const eleventh = await signUpWithHeaders(owner, headers);

    expect((await marksOf([tenth, eleventh])).map(({ source }) => source !== null)).toEqual([false, true]);
  });

  it("300 people at once, then an office of 400 over its day: all stored", async () => {
    const { emails: atOnce, statuses } = await sendSignUps(300, { atOnce: 300, label: "at-once" });
    const { emails: office, statuses: later } = await sendSignUps(400, { atOnce: 40, label: "office" });

    expect([...statuses, ...later].filter((status) => status !== 201)).toEqual([]);
    expect(await storedCount(owner, [...atOnce, ...office])).toBe(700);
  });

  it("a venue's IPv6 Wi-Fi: 300 addresses of one /64 are all stored, as one source", async () => {
    const { database, owner: venueOwner } = await openTestDatabase({ seed: null, poolSize: 20 });
    try {
      const emails = await Promise.all(
        Array.from({ length: 300 }, (_, index) =>
          signUpWithHeaders(database, {
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
      expect(rows).toEqual([{ stored: 300, unmarked: PACE, sources: 1 }]);
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
                (await restFrom(address, backend, oneSignUp(emails[start + index]))).status,
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
  it("3,000 at once: between 1,000 and 2,000 stored, the rest refused with 429 and Retry-After, whatever headers it forges", async () => {
    const { emails, answers } = await sendSignUps(3_000, { atOnce: 100, label: "flood" });
    const stored = answers.filter(({ status }) => status === 201);
    const refused = answers.filter(({ status }) => status === 429);

    expect(stored.length + refused.length).toBe(3_000);
    expect(stored.length).toBeGreaterThanOrEqual(CEILING);
    expect(stored.length).toBeLessThanOrEqual(2 * CEILING);
    expect(await storedCount(owner, emails)).toBe(stored.length);
    for (const { retryAfter } of refused) expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);

    // The hour's bucket drips one more every 3.6 s: the next sign-up may be that one.
    let response = await rest(backend, oneSignUp());
    if (response.status === 201) response = await rest(backend, oneSignUp());
    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({
      code: "PT429",
      details: `At most ${CEILING} sign-ups per address per hour.`,
      hint: "Try again later.",
      message: "Too many sign-ups from this address",
    });
    expect(response.headers.get("proxy-status")).toBe("PostgREST; error=PT429");
    // An hour's bucket of 1,000 has room for one more every 3.6 s.
    expect(Number(response.headers.get("retry-after"))).toBeLessThanOrEqual(4);

    const forgeries: Array<Record<string, string>> = [
      { "x-forwarded-for": "203.0.113.7" },
      { "cf-connecting-ip": "203.0.113.8" },
      { "x-real-ip": "203.0.113.9" },
      { "x-forwarded-for": "203.0.113.10", "cf-connecting-ip": "203.0.113.11", "x-real-ip": "203.0.113.12" },
    ];
    const forged = await Promise.all(
      forgeries.map(async (headers) => {
        const call = oneSignUp();
        return (await rest(backend, { ...call, headers: { ...call.headers, ...headers } })).status;
      }),
    );
    expect(forged).toEqual([429, 429, 429, 429]);
  }, 180_000);

  it("is refused on a plain read: no row written, no lock waited for", async () => {
    const headers = { "cf-connecting-ip": "198.51.100.40" };
    await withLimit("ceiling", "per address per hour", "max_sign_ups = 2", async () => {
      for (let index = 0; index < 2; index++) await signUpWithHeaders(owner, headers);
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

  it("passing the plain read as its ceiling fills, is refused under the lock with nothing written", async () => {
    const headers = { "cf-connecting-ip": "198.51.100.41" };
    await withLimit("ceiling", "per address per hour", "max_sign_ups = 2", async () => {
      await signUpWithHeaders(owner, headers);
      let refused: Promise<void> | undefined;
      await owner.transaction(async (holder) => {
        // The second sign-up, admitted, not yet committed: it holds the source's row.
        await signUpAsVisitor(holder, headers);
        await holder.query("reset role");
        // A third reads the committed state (room for one), and waits for the row (its session
        // runs as anon: pg_locks, not pg_stat_activity, shows it waiting).
        refused = owner.transaction(async (tx) => {
          const before = await sourceWrites(tx);
          const error = await failedSignUp(tx, headers, uniqueEmail("edge"));
          expect(String(error)).toMatch(/"code" ?: ?"PT429"/);
          expect((await sourceWrites(tx)) - before, "rows written by the refused sign-up").toBe(0);
        });
        await expect
          .poll(async () => {
            const { rows } = await holder.query<{ n: number }>(
              "select count(*)::integer as n from pg_catalog.pg_locks where not granted",
            );
            return rows[0]!.n;
          })
          .toBe(1);
      });
      await refused;
    });
  });

  it("keeps its network's neighbours out past the network's ceiling, for a few seconds at most", async ({
    skip,
  }) => {
    await skipUnlessLoopbackRange(skip);
    // A ceiling of 3 per shard stands in for the network's 2,000: once two addresses have stored
    // 48, every shard is full (none holds more than its 3), whichever shards they landed in.
    const ceiling = 3 * SHARDS;
    await withLimit("ceiling", "per network per hour", `max_sign_ups = ${ceiling}`, async () => {
      let stored = 0;
      for (let sent = 0; stored < ceiling && sent < 20 * ceiling; sent++) {
        const { status } = await restFrom(sent % 2 ? "127.0.0.2" : "127.0.0.1", backend, oneSignUp());
        expect([201, 429]).toContain(status);
        if (status === 201) stored++;
      }
      expect(stored).toBe(ceiling);
      const neighbour = await restFrom("127.0.0.3", backend, oneSignUp());

      expect(neighbour.status).toBe(429);
      expect(JSON.parse(neighbour.body).details).toBe(`At most ${ceiling} sign-ups per network per hour.`);
      // A shard's bucket of 3 an hour has room for one more every 1,200 s.
      expect(Number(neighbour.headers["retry-after"])).toBeLessThanOrEqual(3_600 / 3);
    });
  });
});

describe("what counts", () => {
  it("only stored sign-ups: duplicates and junk spend none of the pace", async () => {
    const taken = uniqueEmail("taken");
    expect((await rest(backend, oneSignUp(taken))).status).toBe(201);
    for (let index = 0; index < PACE; index++) {
      expect((await rest(backend, oneSignUp(index % 2 ? taken : "not-an-address"))).status).not.toBe(201);
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
      await signUpAsVisitor(tx, headers);
      await tx.query("reset role");
      expect((await sourceWrites(tx)) - before, "a sign-up that counts: its address and its network").toBe(2);
    });
  });

  it("nothing from a client without an address: it cannot sign up, rather than share one count with all such", async () => {
    // As PostgREST would serve a request without the edge's headers (a self-hosted stack with no
    // proxy in front): the role is anon, and no header names the client.
    await expect(signUpWithHeaders(owner, {}, uniqueEmail("nowhere"))).rejects.toThrow(/"code" ?: ?"PT400"/);
  });

  it("is the same whatever time zone the request sets (PostgREST's Prefer: timezone)", async () => {
    const emptyAtIn = async (zone: string, address: string) =>
      owner.transaction(async (tx) => {
        await tx.query("select set_config('timezone', $1, true)", [zone]);
        await signUpAsVisitor(tx, { "cf-connecting-ip": address });
        await tx.query("reset role");
        // Seconds from the transaction's start, and from now: the sign-up's instant lies between.
        const { rows } = await tx.query<{ seconds: Record<string, [number, number]> }>(
          `select (select jsonb_object_agg(key, jsonb_build_array(value::float8 - extract(epoch from now())::float8,
                                                                  value::float8 - extract(epoch from clock_timestamp())::float8))
                     from jsonb_each_text(empty_at)) as seconds
             from private.sign_up_sources where source_key = $1`,
          [await sourceKeyOf(`address:${address}`)],
        );
        return rows[0]!.seconds;
      });
    // Each bucket is empty again at the sign-up's instant plus its limit's seconds per sign-up.
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
        expect(fromStart).toBeGreaterThanOrEqual(interval - 1e-4);
        expect(fromNow).toBeLessThanOrEqual(interval + 1e-4);
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
    await signUpWithHeaders(owner, headers);
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
    expect((await rest(backend, oneSignUp(lone))).status).toBe(201);
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
      select sha256(n::text::bytea), jsonb_build_object('pace per address per minute', extract(epoch from now() - interval '2 days'))
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
            where (empty_at ->> 'pace per address per minute')::float8 < extract(epoch from now() - interval '1 day')`,
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
      await signUpWithHeaders(owner, { "cf-connecting-ip": address });
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
    await owner.exec("delete from private.sign_up_limits");
    try {
      const emails: string[] = [];
      for (let index = 0; index < PACE + 5; index++) {
        emails.push(
          await signUpWithHeaders(owner, { "cf-connecting-ip": "198.51.100.150" }, uniqueEmail("unlimited")),
        );
      }
      expect((await marksOf(emails)).map(({ source }) => source)).toEqual(emails.map(() => null));
      // Nor any state: a crowd from one address then takes no turns on a row of its own.
      const { rows: kept } = await owner.query("select from private.sign_up_sources where source_key = $1", [
        await sourceKeyOf("address:198.51.100.150"),
      ]);
      expect(kept).toEqual([]);
    } finally {
      await owner.query(
        "insert into private.sign_up_limits select * from json_populate_recordset(null::private.sign_up_limits, $1::json)",
        [rows[0]!.saved],
      );
    }
  });

  it("are never scanned whole by a sign-up, not even one that forgets, whatever the statistics say", async () => {
    // Statistics taken while the table was empty, then a day's sources, all empty, added behind
    // their back: the planner's figures are as wrong as they can be.
    await owner.exec("analyze private.sign_up_sources");
    await emptySources(20_000);
    // A sign-up that forgets empty sources, the one that looks furthest.
    let forgetting = "";
    for (let host = 1; !forgetting; host++) {
      if ((await sourceKeyOf(`address:198.51.101.${host}`))[0]! < 32) forgetting = `198.51.101.${host}`;
    }
    // The table's scans as this connection counts them (it reports them in batches), before
    // and after one sign-up, in one transaction.
    const tableScans = async (tx: Queryable) =>
      (
        await tx.query<{ scans: string; rows: string }>(
          `select seq_scan as scans, seq_tup_read as rows from pg_catalog.pg_stat_xact_user_tables
            where relid = 'private.sign_up_sources'::regclass`,
        )
      ).rows[0]!;
    const [before, after] = await owner.transaction(async (tx) => {
      const counted = await tableScans(tx);
      await signUpAsVisitor(tx, { "cf-connecting-ip": forgetting }, uniqueEmail("stale"));
      await tx.query("reset role");
      return [counted, await tableScans(tx)];
    });
    const scans = Number(after!.scans) - Number(before!.scans);
    expect(Number(after!.rows) - Number(before!.rows), "rows read by scanning the table").toBe(0);
    expect(scans).toBe(0);
  });
});
