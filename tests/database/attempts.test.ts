// What each request shape costs its client, whatever fails and however the request is formed.
// A new sign-up is judged by its own client's sign-ups alone. What the rules refuse (a duplicate,
// a body of several rows in either order, an upsert that skips a listed address, an invalid or
// missing address) is charged to its client's ceilings where no rollback reaches, and meets 429
// where its client's failures pass one: asking whether an address is listed costs what signing up
// costs. What PostgreSQL refuses itself (a cast in `select`, a column the key may not write, a
// body it cannot parse) is counted nowhere: it stores nothing, and costs the client's own sign-ups
// nothing. No request shape waits for another in a circle, and no answer names anything but the
// list.
//
// Real requests through the endpoint, from the loopback range (Linux routes all of 127.0.0.0/8
// to the loopback), in databases whose ceilings are small (the rules read their numbers from the
// table, so a flood of ten proves what a flood of a thousand does: `npm run bench:flood` sends
// the full-size floods). A test that counts to an exact refusal starts from no counts (the
// database's forgotten, FORGET_COUNTS, or a database of its own): a client whose failures share
// every cell of a sketch with a busy stranger's are refused with them, by design
// (25_sign_up_rules.sql). The buckets over time run through the real triggers at instants the
// test sets.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SUPERUSER } from "../../tools/local-supabase/database/cluster.ts";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { connectPool } from "../../tools/local-supabase/database/pool.ts";
import {
  canSendFrom,
  openClockedDatabase,
  storedCount,
  openTestDatabase,
  requestOverSql,
  requestOverSqlIn,
  restFrom,
  signUpCall,
  signUpOverSql,
  signUpOverSqlAt,
  startTestSupabase,
  testServerUrl,
  uniqueEmail,
  upsertCall,
  type RestCall,
  type TestDatabase,
  type TestSupabase,
} from "../support/database.ts";
import {
  FOLLOW,
  FORGET_COUNTS,
  limitIn,
  limitsOf,
  SMALL_NETWORK_CEILINGS as SMALL,
  TINY_LIMITS,
  type Limits,
} from "./small-limits.ts";

let backend: TestSupabase;
let owner: Database;
let limits: Limits;
/** A ceiling of the tests' limits (SMALL_NETWORK_CEILINGS), by name. */
const ceiling = (name: string) => limitIn(limits, "ceiling", name);
beforeAll(async () => {
  backend = await startTestSupabase({ seed: SMALL, poolSize: 20 });
  owner = backend.owner;
  limits = await limitsOf(owner);
});
afterAll(() => backend.close());

/** An address on the list, stored by the owner (no visitor's count spent on it). */
async function listedAddress(db: Database = owner): Promise<string> {
  const email = uniqueEmail("listed");
  await db.query("insert into public.early_access (email) values ($1)", [email]);
  return email;
}

const json = (body: unknown, select = "email"): RestCall => ({
  ...signUpCall({}, select),
  body: JSON.stringify(body),
});

/**
 * Each way of asking the rules decide, as a request about `listed`: the answer it gets before its
 * 429, and whether a refused one still writes its first row (rolled back): a body of two rows is
 * seen to be two only at its second.
 */
const COUNTED: Array<[string, (listed: string) => RestCall, number, { writesWhenRefused?: boolean }]> = [
  ["sign-ups of new addresses", () => json({ email: uniqueEmail("new") }), 201, {}],
  ["one-row duplicates", (listed) => json({ email: listed }), 409, {}],
  [
    "two rows, the listed address first",
    (listed) => json([{ email: listed }, { email: uniqueEmail("probe") }]),
    400,
    {},
  ],
  [
    "two rows, the listed address second",
    (listed) => json([{ email: uniqueEmail("probe") }, { email: listed }]),
    400,
    { writesWhenRefused: true },
  ],
  ["upserts that skip a listed address", (listed) => upsertCall(listed), 201, {}],
  ["casts in select of a listed address", (listed) => json({ email: listed }, "email::int"), 409, {}],
  ["invalid addresses", () => json({ email: "not an address" }), 400, {}],
  ["missing addresses", () => json({ email: null }), 400, {}],
];

/** Each way of asking that PostgreSQL refuses by itself, with its answer, every time. */
const UNCOUNTED: Array<[string, RestCall, number]> = [
  // PostgREST casts the read-back after the insert, in its statement: the new row is rolled back
  // before the rules count it, at the statement's end.
  ["casts in select that fail on a new address", json({ email: "probe@example.com" }, "email::int"), 400],
  [
    "upserts with a failing cast",
    { ...upsertCall("probe@example.com"), path: "early_access?on_conflict=email&select=email::int" },
    400,
  ],
  // Refused before any row reaches the rules.
  [
    "a column the key may not write",
    { ...signUpCall({ id: crypto.randomUUID() }), path: "early_access?columns=id" },
    401,
  ],
  [
    "a body that is no JSON, with ?columns=",
    { ...signUpCall(), path: "early_access?columns=email", body: "{" },
    400,
  ],
  [
    "upserts that merge duplicates, which the key may not update",
    {
      ...signUpCall(),
      path: "early_access?on_conflict=email",
      headers: { prefer: "resolution=merge-duplicates" },
    },
    401,
  ],
];

describe("from one address", () => {
  // Each kind from the same address, counted from nothing.
  beforeEach(() => owner.exec(FORGET_COUNTS));

  it.for(COUNTED)(
    "%s: answered as such, then 429 past its ceiling; no probe stored, nothing marked",
    async ([, call, answer, { writesWhenRefused }], { skip }) => {
      const from = "127.0.10.1";
      if (!(await canSendFrom(from))) skip(`this machine cannot send from ${from} (macOS)`);
      const { max } = ceiling("per address per hour");
      const listed = await listedAddress();
      const deadBefore = await deadRows(owner);
      const statuses: number[] = [];
      for (let sent = 0; sent < 3 * max; sent++)
        statuses.push((await restFrom(from, backend, call(listed))).status);

      // One after another, the bucket drains nothing in between (a tenth of an hour per attempt).
      expect(statuses.slice(0, max)).toEqual(Array(max).fill(answer));
      expect(statuses.slice(max)).toEqual(Array(2 * max).fill(429));
      const { rows } = await owner.query<{ probes: number; marks: number }>(
        `select (select count(*) from public.early_access where email like 'probe-%')::integer as probes,
                (select count(*) from public.early_access_marks m join public.early_access e on e.id = m.sign_up_id
                  where e.email like 'probe-%' or e.email = $1)::integer as marks`,
        [listed],
      );
      expect(rows[0]).toEqual({ probes: 0, marks: 0 });
      // A refused attempt writes nothing: at most the admitted ones left a row behind, and a body
      // of two rows its first.
      expect((await deadRows(owner)) - deadBefore).toBeLessThanOrEqual(writesWhenRefused ? 3 * max : max);
    },
  );

  it.for(UNCOUNTED)(
    "%s: answered as such every time, storing nothing, and the client's own sign-ups untouched",
    async ([, call, answer], { skip }) => {
      const from = "127.0.11.1";
      if (!(await canSendFrom(from))) skip(`this machine cannot send from ${from} (macOS)`);
      const { max } = ceiling("per address per hour");
      const statuses: number[] = [];
      for (let sent = 0; sent < 3 * max; sent++) statuses.push((await restFrom(from, backend, call)).status);

      expect(statuses).toEqual(Array(3 * max).fill(answer));
      expect(await storedCount(owner, ["probe@example.com"])).toBe(0);
      // Then the client's sign-ups, as if it had sent nothing: its ceiling's, the first unmarked.
      const emails = Array.from({ length: max }, () => uniqueEmail("after"));
      const after: number[] = [];
      for (const email of emails) after.push((await restFrom(from, backend, json({ email }))).status);
      expect(after).toEqual(Array(max).fill(201));
      const { rows } = await owner.query<{ source: string | null }>(
        "select source from public.early_access_with_marks where email = $1",
        [emails[0]],
      );
      expect(rows).toEqual([{ source: null }]);
    },
  );

  it("a person who meets 'already registered' once is never refused for it", async () => {
    const headers = { "cf-connecting-ip": "198.51.100.60" };
    const email = await signUpOverSql(owner, headers);
    await expect(signUpOverSql(owner, headers, email)).rejects.toThrow(/early_access_email_key/);
    const answers = [];
    for (let index = 0; index < 3; index++)
      answers.push(await requestOverSql(owner, headers, [{ email: uniqueEmail() }]));
    expect(answers).toEqual(["stored", "stored", "stored"]);
  });

  it("an upsert without on_conflict fails on the email's constraint, charged first", async () => {
    // Hosted PostgREST takes the primary key as the conflict without `on_conflict`: its statement,
    // with the Prefer header it came with.
    const { max } = ceiling("per address per hour");
    const listed = await listedAddress();
    const answers: string[] = [];
    for (let sent = 0; sent <= max; sent++) {
      answers.push(
        await requestOverSql(
          owner,
          { "cf-connecting-ip": "198.51.100.70", prefer: "resolution=ignore-duplicates" },
          [{ email: listed }],
          "id",
        ),
      );
    }
    expect(answers).toEqual([...Array<string>(max).fill("23505"), "PGRST"]);
  });
});

describe("from many addresses of one network", () => {
  it("duplicates meet 429 where that network's sign-ups do, though no address passes its own ceiling", async ({
    skip,
  }) => {
    if (!(await canSendFrom("127.0.30.1"))) skip("this machine cannot send from 127.0.30.1 (macOS)");
    const { max } = ceiling("per network per hour");
    /** 3 × the network's ceiling, one from each of 25 addresses in turn, counted from nothing, until one is refused. */
    const firstRefusal = async (call: (listed: string) => RestCall) => {
      await owner.exec(FORGET_COUNTS);
      const listed = await listedAddress();
      for (let sent = 0; sent < 3 * max; sent++) {
        if ((await restFrom(`127.0.30.${1 + (sent % 25)}`, backend, call(listed))).status === 429)
          return sent;
      }
      return null;
    };
    expect(3 * max).toBeLessThan(25 * ceiling("per address per hour").max);

    expect(await firstRefusal((listed) => json({ email: listed }))).toBe(max);
    expect(await firstRefusal(() => json({ email: uniqueEmail("new") }))).toBe(max);
  });
});

describe("the ceilings over time (a clock the test sets)", () => {
  let clocked: TestDatabase;
  beforeAll(async () => {
    // An address's sketch of two rows, so that two clients can share a cell of one and not the other's.
    clocked = await openClockedDatabase(`${SMALL}
      update private.sign_up_scopes set sketch_rows = 2 where name = 'address';
      ${FOLLOW}`);
  });
  afterAll(() => clocked?.database.close());

  /** signUpOverSqlAt's answer in one string: `stored`, the SQLSTATE, or `429 <which limit> (Retry-After n)`. */
  const signUpAt = async (db: TestDatabase, instant: number, client: string, email: string) => {
    const { answer, details } = await signUpOverSqlAt(db, instant, client, email);
    return details ? answer.replace(/^429 /, `429 ${details} `) : answer;
  };

  it("hold an hour's ceiling at once, one more each time one drains, and the day's hour after hour", async () => {
    const hour = ceiling("per address per hour");
    const day = ceiling("per address per day");
    const launch = Date.parse("2028-01-01T09:00:00Z") / 1000;
    const listed = await listedAddress(clocked.owner);
    const drip = hour.seconds / hour.max;
    const answers = async (instant: number, count: number) => {
      const all: string[] = [];
      for (let index = 0; index < count; index++)
        all.push(await signUpAt(clocked, instant, "10.1.0.1", listed));
      return all;
    };
    const hourly = `429 At most ${hour.max} sign-ups per address per hour.`;

    expect(await answers(launch, hour.max + 1)).toEqual([
      ...Array<string>(hour.max).fill("23505"),
      `${hourly} (Retry-After ${Math.ceil(drip)})`,
    ]);
    expect(await answers(launch + drip + 0.01, 2)).toEqual([
      "23505",
      `${hourly} (Retry-After ${Math.ceil(drip)})`,
    ]);
    // An hour's worth at the top of each hour, every attempt counted, duplicates too, until the
    // day's ceiling: at least its N, at most N + N·t/W over the span t.
    const daily = `429 At most ${day.max} sign-ups per address per day.`;
    let admitted = hour.max + 1;
    let hours = 0;
    for (let refused = false; !refused && hours < 24;) {
      const answered = await answers(launch + ++hours * hour.seconds, hour.max);
      admitted += answered.filter((answer) => answer === "23505").length;
      refused = answered.some((answer) => answer.startsWith(daily));
    }
    expect(hours).toBeLessThan(24);
    expect(admitted).toBeGreaterThanOrEqual(day.max);
    expect(admitted).toBeLessThanOrEqual(day.max + (day.max * hours * hour.seconds) / day.seconds);
    // And a sign-up from that address is judged by its sign-ups alone, of which it made none.
    expect(await signUpAt(clocked, launch + hours * hour.seconds, "10.1.0.1", uniqueEmail())).toBe("stored");
  });

  /** Each address's column in each row of its scope's sketch, as the rules pick them. */
  const columnsOf = async (db: TestDatabase, clients: string[], scope = "address") => {
    const { rows } = await db.owner.query<{ client: string; columns: number[] }>(
      `select client, private.sketch_columns(sha256(n.named), s.sketch_rows, s.sketch_width) as columns
         from unnest($1::text[]) client, private.clients_of(client) n join private.sign_up_scopes s on s.name = n.scope
        where n.scope = $2`,
      [clients, scope],
    );
    return new Map(rows.map(({ client, columns }) => [client, columns]));
  };
  /** `count` attempts of `client` at `instant`, a duplicate of `listed` each: the answers. */
  const attempts = async (
    db: TestDatabase,
    instant: number,
    client: string,
    listed: string,
    count: number,
  ) => {
    const answers: string[] = [];
    for (let index = 0; index < count; index++) answers.push(await signUpAt(db, instant, client, listed));
    return answers;
  };

  it("two clients sharing a cell: each is refused past its own ceiling, never before, and neither rides free behind the other", async () => {
    const { max, seconds } = ceiling("per address per hour");
    const launch = Date.parse("2028-01-01T09:00:00Z") / 1000;
    // Counted from nothing: the test before it filled cells of its own until a day after launch.
    await clocked.owner.exec(FORGET_COUNTS);
    // Two addresses of networks of their own whose columns meet in the first row, not in the others,
    // and whose networks' cells never meet: else the second's duplicates would meet its network's
    // ceiling, filled by the first's, before its own (a price the next test measures).
    const candidates = Array.from(
      { length: 2_000 },
      (_, index) => `10.${20 + (index >> 8)}.${index & 255}.1`,
    );
    const columns = await columnsOf(clocked, candidates);
    const networkColumns = await columnsOf(clocked, candidates, "network");
    let pair: [string, string] | undefined;
    for (const [index, first] of candidates.entries()) {
      const mine = columns.get(first)!;
      const myNetwork = networkColumns.get(first)!;
      const other = candidates.slice(index + 1).find((client) => {
        const theirs = columns.get(client)!;
        return (
          theirs[0] === mine[0] &&
          theirs.slice(1).every((column, row) => column !== mine[row + 1]) &&
          networkColumns.get(client)!.every((column, row) => column !== myNetwork[row])
        );
      });
      if (other) {
        pair = [first, other];
        break;
      }
    }
    expect(pair, "two addresses whose cells meet in one row").toBeDefined();
    const [first, second] = pair!;
    const listed = await listedAddress(clocked.owner);
    const refusal = `429 At most ${max} sign-ups per address per hour. (Retry-After ${Math.ceil(seconds / max)})`;

    // The first fills its ceiling, and the cell it shares.
    expect(await attempts(clocked, launch, first, listed, max + 1)).toEqual([
      ...Array<string>(max).fill("23505"),
      refusal,
    ]);
    // The second is counted in that full cell too, but its least-held cell is its own: its own
    // ceiling, no more and no less.
    expect(await attempts(clocked, launch + 1, second, listed, max + 1)).toEqual([
      ...Array<string>(max).fill("23505"),
      expect.stringMatching(/^429 At most \d+ sign-ups per address per hour\./),
    ]);
    // And the first still meets its own, whatever the second did.
    expect(await attempts(clocked, launch + 2, first, listed, 2)).toEqual([
      expect.stringMatching(/^429 /),
      expect.stringMatching(/^429 /),
    ]);
  });

  it("a stranger sharing every cell with a flood of failures: its sign-up is stored; its own failure meets 429 (the price of the sketch); the flood never rides free", async () => {
    // A sketch of one cell: every address shares it.
    const shared = await openClockedDatabase(`${SMALL}
      update private.sign_up_scopes set sketch_rows = 1, sketch_width = 1 where name = 'address';
      ${FOLLOW}`);
    try {
      const { max, seconds } = ceiling("per address per hour");
      const launch = Date.parse("2028-01-01T09:00:00Z") / 1000;
      const listed = await listedAddress(shared.owner);
      const stranger = uniqueEmail("stranger");

      expect((await attempts(shared, launch, "10.2.0.1", listed, max + 1)).at(-1)).toMatch(/^429 /);
      // The stranger's sign-up reads only its own counts; its duplicate, the full cell.
      expect(await signUpAt(shared, launch + 1, "10.3.0.1", stranger)).toBe("stored");
      expect(await signUpAt(shared, launch + 2, "10.3.0.1", stranger)).toMatch(/^429 /);
      // Once one failure has drained, one more fits, whoever sends it; then the flood is refused.
      const drained = launch + seconds / max + 2;
      expect(await signUpAt(shared, drained, "10.3.0.1", stranger)).toBe("23505");
      expect(await attempts(shared, drained + 1, "10.2.0.1", listed, 2 * max)).toEqual(
        Array(2 * max).fill(expect.stringMatching(/^429 /)),
      );
    } finally {
      await shared.database.close();
    }
  });
});

describe("request shapes at once", () => {
  it("wait for no one in a circle: no deadlock, no timeout, no server error", async () => {
    // The schema's own limits: nothing is refused, so every request takes every lock it can.
    const { database, owner: burstOwner } = await openTestDatabase({ seed: null, poolSize: 50 });
    try {
      const listed = await listedAddress(burstOwner);
      const strangersListed = await Promise.all(Array.from({ length: 5 }, () => listedAddress(burstOwner)));
      /** A request as PostgREST sends it, from `client`. */
      const send = (client: string, onConflict: string, rows: Array<{ email: string }>, prefer = "") =>
        requestOverSql(database, { "cf-connecting-ip": client, prefer }, rows, onConflict);
      const shapes = (client: string, mine: string) => [
        () => send(client, "email", [{ email: mine }], "resolution=ignore-duplicates"),
        () => send(client, "id", [{ email: mine }], "resolution=ignore-duplicates"),
        () => send(client, "", [{ email: uniqueEmail() }, { email: mine }]),
        () => send(client, "", [{ email: mine }, { email: uniqueEmail() }]),
        () => send(client, "", [{ email: mine }]),
        () => send(client, "", [{ email: uniqueEmail() }]),
      ];
      const requests = Array.from({ length: 300 }, (_, index) => {
        const fromOne = index % 2 === 0;
        const client = fromOne ? "192.0.2.1" : `198.51.100.${index % 250}`;
        const all = shapes(client, fromOne ? listed : strangersListed[index % 5]!);
        return all[index % all.length]!;
      });
      const answers = await Promise.all(requests.map((request) => request()));

      const counts = Object.groupBy(answers, (answer) => answer);
      expect(Object.keys(counts).sort()).toEqual(["23505", "P0001", "stored"]);
      // Each ran under anon's own statement timeout, as PostgREST runs it: a request that waited
      // that long would have answered 57014.
      const timeout = await database.transaction(async (tx) => {
        await requestOverSqlIn(tx, { "cf-connecting-ip": "198.51.100.7" }, [{ email: uniqueEmail() }]);
        return (await tx.query<{ timeout: string }>("select current_setting('statement_timeout') as timeout"))
          .rows[0]!.timeout;
      });
      expect(timeout).toBe("3s");
    } finally {
      await database.close();
    }
  }, 60_000);
});

describe("no answer names anything but the list", () => {
  /** Names of what lives behind the list: its schema, its other tables, functions, sequences, constraints. */
  const INTERNAL =
    /private|early_access_marks|sign_up_|ceiling per|charge_|client_key|before_sign_up|after_sign_up|broken_check|refuse|record_mark|_fkey|_pkey/;

  it("whatever the rules refuse, and however the request is formed", async ({ skip }) => {
    const from = "127.0.5.1";
    // Every failure the rules decide is charged before it is answered (25_sign_up_rules.sql): the
    // kinds the checks refuse each come from a network of its own, so that each gets its own
    // answer, not a 429.
    let others = 0;
    const other = () => `127.0.${5 + ++others}.1`;
    if (!(await canSendFrom(from))) skip(`this machine cannot send from ${from} (macOS)`);
    // Paces of one and ceilings of two, so that each kind of mark and refusal comes within a few requests.
    const small = await startTestSupabase({
      seed: TINY_LIMITS,
    });
    try {
      const listed = uniqueEmail("listed");
      await small.owner.query("insert into public.early_access (email) values ($1)", [listed]);
      const calls: Array<[string, RestCall]> = [
        [from, json({ email: listed })],
        [from, json([{ email: listed }, { email: uniqueEmail() }])],
        [from, json([{ email: uniqueEmail() }, { email: listed }])],
        [from, json({ email: uniqueEmail() }, "email::int")],
        [other(), json({ email: "not-an-address" })],
        [other(), json({ email: uniqueEmail(), phone: "\u200b" })],
        [other(), json({ email: `${"a".repeat(2_000)}@example.com` })],
        [other(), json({ email: null })],
        [other(), json({ email: uniqueEmail(), id: "00000000-0000-4000-8000-000000000000" })],
        [other(), json({ email: uniqueEmail() })],
        ...Array.from({ length: 2 }, () => [other(), upsertCall(listed)] as [string, RestCall]),
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

/**
 * Rows of the list no one sees: those rolled-back requests wrote, until a vacuum. pgstattuple
 * reads the table's pages, so it needs the server's superuser.
 */
async function deadRows(db: Database): Promise<number> {
  const { rows } = await db.query<{ name: string }>("select current_database() as name");
  const superuser = connectPool({ url: testServerUrl(SUPERUSER, rows[0]!.name), poolSize: 1 });
  try {
    await superuser.exec("create extension if not exists pgstattuple");
    const { rows: dead } = await superuser.query<{ count: number }>(
      "select dead_tuple_count::integer as count from pgstattuple('public.early_access')",
    );
    return dead[0]!.count;
  } finally {
    await superuser.close();
  }
}
