// The sign-up limits, which the database enforces, so they hold on hosted Supabase too. No real
// person is refused because others share their address: past a source's normal pace a sign-up
// is stored and marked for the owner's review; only past a ceiling far above any crowd is one
// refused (429). Each limit is exact over any window of its length, counted atomically, keyed by
// a keyed hash of the address, never the address. Requests come from 127.0.0.1 through the
// endpoint unless sent from another loopback address, or, for addresses no socket here can
// have, as PostgREST runs them: a transaction as anon with the edge's headers.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Database, Queryable } from "../../server/local-supabase/database/database.ts";
import {
  canSendFrom,
  clientFor,
  openTestDatabase,
  rest,
  restFrom,
  startTestBackend,
  storedCount,
  uniqueEmail,
  type RestCall,
  type TestBackend,
} from "./helpers.ts";

let backend: TestBackend;
let owner: Database;
beforeAll(async () => {
  // The migrations' own limits, not lifted as elsewhere; the gateway lets the tests' hundreds of
  // requests at once through (the database's rules are what is tested here).
  backend = await startTestBackend({ seed: null, poolSize: 20 });
  owner = backend.owner;
});
afterAll(() => backend.close());

/** The migrations' pace per address per minute (checked below). */
const PACE = 10;
/** The migrations' ceiling per address per hour. */
const CEILING = 1000;

beforeEach(() => owner.exec("truncate private.sign_up_sources"));

const sleep = (ms: number) => new Promise((resume) => setTimeout(resume, Math.max(0, ms)));

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

const signUp = (email = uniqueEmail()): RestCall => ({
  method: "POST",
  path: "early_access?select=email",
  headers: { prefer: "return=representation" },
  body: JSON.stringify({ email }),
});

/** Sends `count` sign-ups, `atOnce` at a time, from `from` (a loopback address) or 127.0.0.1. */
async function signUps(count: number, { atOnce = 25, from = "", label = "crowd" } = {}) {
  const emails = Array.from({ length: count }, (_, index) => uniqueEmail(`${label}${index}`));
  const statuses: number[] = [];
  for (let start = 0; start < count; start += atOnce) {
    const batch = emails.slice(start, start + atOnce);
    statuses.push(
      ...(await Promise.all(
        batch.map(async (email) =>
          from
            ? (await restFrom(from, backend, signUp(email))).status
            : (await rest(backend, signUp(email))).status,
        ),
      )),
    );
  }
  return { emails, statuses };
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

/** The short id a source's marks carry: the first 6 bytes of the address's keyed hash, in hex. */
async function sourceIdOf(client: string): Promise<string> {
  const { rows } = await owner.query<{ secret: Buffer }>("select secret from private.client_key_secret");
  return createHash("sha256").update(rows[0]!.secret).update(client).digest("hex").slice(0, 12);
}

/** A sign-up as PostgREST runs it behind the edge, in `tx`: anon, with the edge's headers. */
async function signUpAsVisitor(tx: Queryable, headers: Record<string, string>, email = uniqueEmail()) {
  await tx.query("select set_config('request.headers', $1, true), set_config('role', 'anon', true)", [
    JSON.stringify(headers),
  ]);
  await tx.query("insert into public.early_access (email) values ($1)", [email]);
  return email;
}

/** The same, in a transaction of its own. */
const signUpWithHeaders = (db: Database, headers: Record<string, string>, email = uniqueEmail()) =>
  db.transaction((tx) => signUpAsVisitor(tx, headers, email));

const skipUnlessLoopbackRange = async (skip: (note: string) => void) => {
  if (!(await canSendFrom("127.0.0.2"))) skip("this machine cannot send from 127.0.0.2 (macOS)");
};

describe("the migrations' limits", () => {
  it("are paces of 10 a minute and 100 a day per address and 200 an hour per network, and ceilings far above", async () => {
    const { rows } = await owner.query(
      `select kind, name, per, window_length::text as window, max_sign_ups as max
         from private.sign_up_limits order by kind, per, window_length`,
    );
    expect(rows).toEqual([
      { kind: "ceiling", name: "per address per hour", per: "address", window: "01:00:00", max: CEILING },
      { kind: "ceiling", name: "per address per day", per: "address", window: "1 day", max: 3000 },
      { kind: "ceiling", name: "per network per hour", per: "network", window: "01:00:00", max: 2000 },
      { kind: "ceiling", name: "per network per day", per: "network", window: "1 day", max: 10000 },
      { kind: "pace", name: "per address per minute", per: "address", window: "00:01:00", max: PACE },
      { kind: "pace", name: "per address per day", per: "address", window: "1 day", max: 100 },
      { kind: "pace", name: "per network per hour", per: "network", window: "01:00:00", max: 200 },
    ]);
    const { rows: scopes } = await owner.query(
      "select name, ipv4_prefix as v4, ipv6_prefix as v6 from private.sign_up_scopes order by name",
    );
    expect(scopes).toEqual([
      { name: "address", v4: 32, v6: 56 },
      { name: "network", v4: 24, v6: 48 },
    ]);
  });
});

describe("a crowd behind one address", () => {
  it("a keynote: 150 people within a minute are all stored; past the first 10, marked with one source", async () => {
    const { emails, statuses } = await signUps(150, { label: "keynote" });

    expect(statuses).toEqual(Array(150).fill(201));
    const marked = await marksOf(emails);
    expect(marked).toHaveLength(150);
    expect(marked.filter(({ source }) => source === null)).toHaveLength(PACE);
    const past = marked.filter(({ source }) => source !== null);
    expect(new Set(past.map(({ source }) => source))).toEqual(
      new Set([await sourceIdOf("address:127.0.0.1")]),
    );
    // Each counted in turn, concurrent or not: the 11th to the 150th of the minute, and from the
    // 101st on past the day's pace too.
    expect(past.map(({ review }) => review).sort()).toEqual(
      Array.from({ length: 140 }, (_, index) => {
        const n = index + PACE + 1;
        const minute = `${n} sign-ups per address per minute (pace: 10)`;
        return n > 100 ? `${minute}; ${n} sign-ups per address per day (pace: 100)` : minute;
      }).sort(),
    );
  });

  it("keeps the pace exact under concurrency: of 40 sent at once, exactly the first 10 are unmarked", async () => {
    const { emails, statuses } = await signUps(40, { atOnce: 40, label: "burst" });

    expect(statuses).toEqual(Array(40).fill(201));
    const marked = await marksOf(emails);
    expect(marked.filter(({ source }) => source === null)).toHaveLength(PACE);
    expect(marked.filter(({ source }) => source !== null)).toHaveLength(40 - PACE);
  });

  it("an office: 400 people behind one address are all stored", async () => {
    const { emails, statuses } = await signUps(400, { atOnce: 40, label: "office" });

    expect(statuses.filter((status) => status !== 201)).toEqual([]);
    expect(await storedCount(owner, emails)).toBe(400);
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
                (await restFrom(address, backend, signUp(emails[start + index]))).status,
            ),
        )),
      );
    }

    expect(statuses).toEqual(Array(250).fill(201));
    const marked = await marksOf(emails);
    // Past the network's pace of 200 an hour, each marked with its own address's source.
    const past = marked.filter(({ source }) => source !== null);
    expect(past).toHaveLength(50);
    expect(new Set(past.map(({ source }) => source)).size).toBe(50);
    expect(past.map(({ review }) => review).sort()).toEqual(
      Array.from(
        { length: 50 },
        (_, index) => `${index + 201} sign-ups per network per hour (pace: 200)`,
      ).sort(),
    );
  });
});

describe("a flood from one address", () => {
  it("is cut off with 429 after 1,000 stored in an hour, whatever headers it forges", async () => {
    const { emails, statuses } = await signUps(CEILING + 20, { atOnce: 40, label: "flood" });

    expect(statuses.filter((status) => status === 201)).toHaveLength(CEILING);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    expect(await storedCount(owner, emails)).toBe(CEILING);

    const refused = await rest(backend, signUp());
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      code: "PT429",
      details: "At most 1000 sign-ups per address per hour.",
      hint: "Try again later.",
      message: "Too many sign-ups from this address",
    });
    expect(refused.headers.get("proxy-status")).toBe("PostgREST; error=PT429");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(3_600 - 120);
    expect(retryAfter).toBeLessThanOrEqual(3_600);

    const forgeries: Array<Record<string, string>> = [
      { "x-forwarded-for": "203.0.113.7" },
      { "cf-connecting-ip": "203.0.113.8" },
      { "x-real-ip": "203.0.113.9" },
      { "x-forwarded-for": "203.0.113.10", "cf-connecting-ip": "203.0.113.11", "x-real-ip": "203.0.113.12" },
    ];
    const forged = await Promise.all(
      forgeries.map(async (headers) => {
        const call = signUp();
        return (await rest(backend, { ...call, headers: { ...call.headers, ...headers } })).status;
      }),
    );
    expect(forged).toEqual([429, 429, 429, 429]);
  }, 120_000);

  it("is capped for the day, with a Retry-After until its first sign-up of the day is a day old", async () => {
    // A ceiling of 3 stands in for the day's 3,000, which the hour's would reach first.
    await withLimit("ceiling", "per address per day", "max_sign_ups = 3", async () => {
      for (let index = 0; index < 3; index++) expect((await rest(backend, signUp())).status).toBe(201);
      const response = await rest(backend, signUp());

      expect(response.status).toBe(429);
      expect((await response.json()).details).toBe("At most 3 sign-ups per address per day.");
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(86_400 - 60);
      expect(Number(response.headers.get("retry-after"))).toBeLessThanOrEqual(86_400);
    });
  });

  it("is held to its ceiling over any window of its length, also across the turn of a calendar window", async () => {
    // At most 3 in any 4 seconds. Calendar windows of 4 s turn on every multiple of 4 s since
    // 2000: 3 sign-ups just before such an instant and 3 just after would all pass them. These
    // start 0.7 s before one.
    await withLimit(
      "ceiling",
      "per address per hour",
      "max_sign_ups = 3, window_length = '4 seconds'",
      async () => {
        await sleep(4_000 - (Date.now() % 4_000) - 700);
        const first = Date.now();
        for (let index = 0; index < 3; index++) expect((await rest(backend, signUp())).status).toBe(201);
        await sleep(first + 1_200 - Date.now());
        const after = [];
        for (let index = 0; index < 3; index++) after.push((await rest(backend, signUp())).status);
        expect(after, "sign-ups just past the turn of a calendar window").toEqual([429, 429, 429]);

        // Once those three have left the window (the refused ones were never counted), three fit.
        await sleep(first + 4_300 - Date.now());
        const later = [];
        for (let index = 0; index < 4; index++) later.push((await rest(backend, signUp())).status);
        expect(later).toEqual([201, 201, 201, 429]);
      },
    );
  });

  it("keeps its network's neighbours out past the network's ceiling, for an hour at most", async ({
    skip,
  }) => {
    await skipUnlessLoopbackRange(skip);
    // A ceiling of 3 stands in for the network's 2,000.
    await withLimit("ceiling", "per network per hour", "max_sign_ups = 3", async () => {
      expect((await rest(backend, signUp())).status).toBe(201);
      expect((await rest(backend, signUp())).status).toBe(201);
      expect((await restFrom("127.0.0.2", backend, signUp())).status).toBe(201);
      const neighbour = await restFrom("127.0.0.3", backend, signUp());

      expect(neighbour.status).toBe(429);
      expect(JSON.parse(neighbour.body).details).toBe("At most 3 sign-ups per network per hour.");
      expect(Number(neighbour.headers["retry-after"])).toBeLessThanOrEqual(3_600);
    });
  });
});

describe("what counts", () => {
  it("only stored sign-ups: duplicates and junk spend none of the pace", async () => {
    const taken = uniqueEmail("taken");
    expect((await rest(backend, signUp(taken))).status).toBe(201);
    for (let index = 0; index < PACE; index++) {
      expect((await rest(backend, signUp(index % 2 ? taken : "not-an-address"))).status).not.toBe(201);
    }
    const { emails } = await signUps(PACE - 1, { atOnce: 1, label: "after-junk" });
    expect((await marksOf(emails)).every(({ source }) => source === null)).toBe(true);
  });

  it("nothing from a client without an address: it cannot sign up, rather than share one count with all such", async () => {
    // As PostgREST would serve a request without the edge's headers (a self-hosted stack with no
    // proxy in front): the role is anon, and no header names the client.
    await expect(signUpWithHeaders(owner, {}, uniqueEmail("nowhere"))).rejects.toThrow(/"code" ?: ?"PT400"/);
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
    // Something that is no address still counts, as itself.
    [{ "cf-connecting-ip": "unknown" }, "unknown", "unknown"],
  ])("from %j is the address %s, in the network %s", async (headers, address, network) => {
    await signUpWithHeaders(owner, headers);
    const { rows } = await owner.query<{ matches: boolean[] }>(
      `select array[
         exists (select from private.sign_up_sources where source_key = sha256(k.secret || convert_to($1, 'UTF8'))),
         exists (select from private.sign_up_sources where source_key = sha256(k.secret || convert_to($2, 'UTF8')))
       ] as matches
       from private.client_key_secret k`,
      [`address:${address}`, `network:${network}`],
    );
    expect(rows[0]!.matches).toEqual([true, true]);
  });
});

describe("privacy", () => {
  it("a source is a keyed hash, never an address, and a lone sign-up records none", async () => {
    const lone = uniqueEmail("lone");
    expect((await rest(backend, signUp(lone))).status).toBe(201);
    expect(await marksOf([lone])).toEqual([{ email: lone, source: null, review: null }]);

    const { emails } = await signUps(PACE + 1, { atOnce: 1, label: "hashed" });
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
    await signUps(PACE, { atOnce: 1, label: "before" });
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

describe("the sources' logs", () => {
  it("are pruned at most 32 at a time once their window has passed, by one sign-up in eight", async () => {
    await owner.exec(`
      insert into private.sign_up_sources (source_key, recent)
      select sha256(n::text::bytea), array[now() - interval '2 days']
        from generate_series(1, 5000) n`);
    const left = async () =>
      (
        await owner.query<{ n: number }>(
          "select count(*)::integer as n from private.sign_up_sources where recent[1] < now() - interval '1 day'",
        )
      ).rows[0]!.n;
    // Which sign-ups prune is decided by their address's keyed hash: its first byte below 32.
    const { rows } = await owner.query<{ secret: Buffer }>("select secret from private.client_key_secret");
    const prunes = (address: string) =>
      createHash("sha256").update(rows[0]!.secret).update(`address:${address}`).digest()[0]! < 32;
    const addresses = Array.from({ length: 250 }, (_, index) => `198.51.100.${index + 1}`);
    const pruning = addresses.filter(prunes).slice(0, 5);
    const others = addresses.filter((address) => !prunes(address)).slice(0, 5);
    expect(pruning).toHaveLength(5);

    for (const address of [...others, ...pruning]) {
      const before = await left();
      await signUpWithHeaders(owner, { "cf-connecting-ip": address });
      const pruned = before - (await left());
      if (prunes(address)) expect(pruned, address).toBeGreaterThan(0);
      else expect(pruned, address).toBe(0);
      expect(pruned, address).toBeLessThanOrEqual(32);
    }
  });

  it("keep nothing older than the sign-up at hand while there are no limits, and mark or refuse none", async () => {
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
      const logs = await owner.query<{ longest: number }>(
        "select max(cardinality(recent))::integer as longest from private.sign_up_sources",
      );
      expect(logs.rows[0]!.longest).toBe(1);
    } finally {
      await owner.query(
        "insert into private.sign_up_limits select * from json_populate_recordset(null::private.sign_up_limits, $1::json)",
        [rows[0]!.saved],
      );
    }
  });

  it("are never scanned whole by a sign-up, whatever the statistics say", async () => {
    // Statistics taken while the table was empty, then a day's sources, all expired, added behind
    // their back: the planner's figures are as wrong as they can be.
    await owner.exec("analyze private.sign_up_sources");
    await owner.exec(`
      insert into private.sign_up_sources (source_key, recent)
      select sha256(n::text::bytea), array[now() - interval '2 days']
        from generate_series(1, 20000) n`);
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
      await signUpAsVisitor(tx, { "cf-connecting-ip": "198.51.100.200" }, uniqueEmail("stale"));
      await tx.query("reset role");
      return [counted, await tableScans(tx)];
    });
    const scans = Number(after!.scans) - Number(before!.scans);
    expect(Number(after!.rows) - Number(before!.rows), "rows read by scanning the table").toBe(0);
    expect(scans).toBe(0);
  });
});
