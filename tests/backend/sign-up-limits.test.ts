// The per-client limits on sign-ups, which the database enforces, so they hold on hosted
// Supabase too: a short burst and a daily cap per client address, an hourly cap per network,
// each over any window of its length, counted atomically, keyed by a hash of the address rather
// than the address, pruned once a window has passed. Every request here comes from 127.0.0.1
// unless sent from another loopback address.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Database } from "../../server/local-supabase/database/database.ts";
import {
  canSendFrom,
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
  // The migration's own limits, not lifted as elsewhere; the gateway's cap on requests at once
  // stays lifted (its 30 concurrent sign-ups test the database's limits, not the gateway's).
  backend = await startTestBackend({ seed: null });
  owner = backend.owner;
});
afterAll(() => backend.close());

/** The migration's burst limit (checked below). */
const BURST = 10;
beforeEach(() => owner.exec("truncate private.sign_up_windows"));

const sleep = (ms: number) => new Promise((resume) => setTimeout(resume, Math.max(0, ms)));

/** Runs `work` with one limit changed, and puts it back. */
async function withLimit(name: string, change: string, work: () => Promise<void>): Promise<void> {
  const { rows } = await owner.query<{ saved: string }>(
    "select row_to_json(l)::text as saved from private.sign_up_limits l where name = $1",
    [name],
  );
  await owner.query(`update private.sign_up_limits set ${change} where name = $1`, [name]);
  try {
    await work();
  } finally {
    await owner.query(
      `update private.sign_up_limits set (window_length, max_sign_ups, ipv4_prefix, ipv6_prefix) =
         (select window_length, max_sign_ups, ipv4_prefix, ipv6_prefix
            from json_populate_record(null::private.sign_up_limits, $1::json))
       where name = $2`,
      [rows[0]!.saved, name],
    );
  }
}

const signUp = (email = uniqueEmail()): RestCall => ({
  method: "POST",
  path: "early_access?select=email",
  headers: { prefer: "return=representation" },
  body: JSON.stringify({ email }),
});

describe("the migration's limits", () => {
  it("are 10 sign-ups a minute and 100 a day per address (an IPv6 /56), and 200 an hour per network", async () => {
    const { rows } = await owner.query(
      `select name, window_length::text as window, max_sign_ups as max, ipv4_prefix as v4, ipv6_prefix as v6
         from private.sign_up_limits order by name`,
    );
    expect(rows).toEqual([
      { name: "per address per day", window: "1 day", max: 100, v4: 32, v6: 56 },
      { name: "per address per minute", window: "00:01:00", max: BURST, v4: 32, v6: 56 },
      { name: "per network per hour", window: "01:00:00", max: 200, v4: 24, v6: 48 },
    ]);
  });
});

describe("one address", () => {
  it("gets 429 with PostgREST's error body once past the burst limit, and that sign-up is not stored", async () => {
    for (let index = 0; index < BURST; index++) {
      expect((await rest(backend, signUp())).status, `sign-up ${index + 1}`).toBe(201);
    }
    const email = uniqueEmail("eleventh");
    const response = await rest(backend, signUp(email));

    expect(response.status).toBe(429);
    expect(await response.json()).toEqual({
      code: "PT429",
      details: "At most 10 sign-ups per address per minute.",
      hint: "Try again later.",
      message: "Too many sign-ups from this address",
    });
    expect(response.headers.get("proxy-status")).toBe("PostgREST; error=PT429");
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(response.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    expect(await storedCount(owner, [email])).toBe(0);
  });

  it("cannot slip past the limit with concurrent requests", async () => {
    const emails = Array.from({ length: 3 * BURST }, (_, index) => uniqueEmail(`burst${index}`));
    const statuses = await Promise.all(
      emails.map(async (email) => (await rest(backend, signUp(email))).status),
    );

    expect(statuses.filter((status) => status === 201)).toHaveLength(BURST);
    expect(statuses.filter((status) => status === 429)).toHaveLength(2 * BURST);
    expect(await storedCount(owner, emails)).toBe(BURST);
  });

  it("is not reset by forged forwarding headers", async () => {
    for (let index = 0; index < BURST; index++) await rest(backend, signUp());
    const forgeries: Array<Record<string, string>> = [
      { "x-forwarded-for": "203.0.113.7" },
      { "cf-connecting-ip": "203.0.113.8" },
      { "x-real-ip": "203.0.113.9" },
      {
        "x-forwarded-for": "203.0.113.10",
        "cf-connecting-ip": "203.0.113.11",
        "x-real-ip": "203.0.113.12",
      },
    ];
    const forged = await Promise.all(
      forgeries.map(async (headers) => {
        const call = signUp();
        return (await rest(backend, { ...call, headers: { ...call.headers, ...headers } })).status;
      }),
    );
    expect(forged).toEqual([429, 429, 429, 429]);
  });

  it("spends nothing on sign-ups that fail", async () => {
    const taken = uniqueEmail("taken");
    expect((await rest(backend, signUp(taken))).status).toBe(201);
    // Duplicates and junk are refused by the database and roll their count back.
    for (let index = 0; index < BURST; index++) {
      expect((await rest(backend, signUp(index % 2 ? taken : "not-an-address"))).status).not.toBe(201);
    }
    const statuses = [];
    for (let index = 1; index < BURST; index++) statuses.push((await rest(backend, signUp())).status);
    expect(statuses).toEqual(Array(BURST - 1).fill(201));
  });

  it("is capped for the day, with a Retry-After until its first sign-up of the day is a day old", async () => {
    // A cap of 3 stands in for the day's 100, which the minute's limit would get to first.
    await withLimit("per address per day", "max_sign_ups = 3", async () => {
      for (let index = 0; index < 3; index++) expect((await rest(backend, signUp())).status).toBe(201);
      const response = await rest(backend, signUp());

      expect(response.status).toBe(429);
      expect((await response.json()).details).toBe("At most 3 sign-ups per address per day.");
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(86_400 - 60);
      expect(Number(response.headers.get("retry-after"))).toBeLessThanOrEqual(86_400);
    });
  });

  it("holds over any window of its length, also across the instant a calendar window would turn", async () => {
    // At most 3 in any 4 seconds. Calendar windows of 4 s (the old rule's date_bin) turn on every
    // multiple of 4 s since 2000: 3 sign-ups just before such an instant and 3 just after would
    // all pass. These start 0.7 s before one.
    await withLimit("per address per minute", "max_sign_ups = 3, window_length = '4 seconds'", async () => {
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
    });
  });
});

describe("another address", () => {
  it("still signs up while the first is over its limit", async ({ skip }) => {
    if (!(await canSendFrom("127.0.0.2"))) skip("this machine cannot send from 127.0.0.2 (macOS)");
    for (let index = 0; index <= BURST; index++) await rest(backend, signUp());
    expect((await rest(backend, signUp())).status).toBe(429);

    expect((await restFrom("127.0.0.2", backend, signUp())).status).toBe(201);
  });

  it("in the same network shares the network's cap, for an hour at most", async ({ skip }) => {
    if (!(await canSendFrom("127.0.0.2"))) skip("this machine cannot send from 127.0.0.2 (macOS)");
    // A cap of 3 stands in for the network's 200.
    await withLimit("per network per hour", "max_sign_ups = 3", async () => {
      expect((await rest(backend, signUp())).status).toBe(201);
      expect((await rest(backend, signUp())).status).toBe(201);
      expect((await restFrom("127.0.0.2", backend, signUp())).status).toBe(201);
      // 127.0.0.3 never signed up: its neighbours' sign-ups keep it out, but not for long.
      const neighbour = await restFrom("127.0.0.3", backend, signUp());

      expect(neighbour.status).toBe(429);
      expect(JSON.parse(neighbour.body).details).toBe("At most 3 sign-ups per network per hour.");
      expect(Number(neighbour.headers["retry-after"])).toBeLessThanOrEqual(3_600);
    });
  });
});

describe("a client without an address", () => {
  it("cannot sign up, rather than share one bucket with every other such client", async () => {
    // As a request PostgREST would serve without the edge's headers (a self-hosted stack with no
    // proxy in front): the role is anon, and no header names the client.
    const attempt = owner.transaction(async (tx) => {
      await tx.query("select set_config('request.headers', '{}', true)");
      await tx.exec("set local role anon");
      await tx.query("insert into public.early_access (email) values ($1)", [uniqueEmail("nowhere")]);
    });
    await expect(attempt).rejects.toThrow(/"code" ?: ?"PT400"/);
  });
});

describe("the counters", () => {
  it("keep no client address, only a keyed hash of it", async () => {
    await rest(backend, signUp());
    const { rows } = await owner.query<{ client_key: Uint8Array | Buffer; text: string }>(
      "select client_key, w::text as text from private.sign_up_windows w",
    );
    expect(rows).toHaveLength(3);
    for (const { client_key, text } of rows) {
      expect(client_key.length, "a SHA-256 digest").toBe(32);
      expect(text).not.toMatch(/127\.0\.0\.[01]/);
    }
    // The address hashes alike in both of its windows, its network otherwise, and neither like
    // an unkeyed hash.
    const { rows: unkeyed } = await owner.query<{ matches: boolean }>(
      `select count(distinct client_key) = 2
              and bool_and(client_key not in (sha256('127.0.0.1'::bytea), sha256('127.0.0.0'::bytea))) as matches
         from private.sign_up_windows`,
    );
    expect(unkeyed).toEqual([{ matches: true }]);
  });

  it("are pruned once their window has passed", async () => {
    await owner.exec(`
      insert into private.sign_up_windows (client_key, limit_name, admitted, expires_at)
      values (sha256('gone'::bytea), 'per address per minute', array[now() - interval '2 minutes'], now() - interval '1 minute')
    `);
    await rest(backend, signUp());
    const { rows } = await owner.query<{ n: number }>(
      "select count(*)::integer as n from private.sign_up_windows where expires_at < now()",
    );
    expect(rows).toEqual([{ n: 0 }]);
  });
});

describe("the client", () => {
  // As PostgREST hands the request's headers to the database (request.headers).
  async function clientFor(headers: Record<string, string> | null, v4 = 32, v6 = 56): Promise<string | null> {
    return owner.transaction(async (tx) => {
      if (headers)
        await tx.query("select set_config('request.headers', $1, true)", [JSON.stringify(headers)]);
      const { rows } = await tx.query<{ client: string | null }>(
        "select private.client_address($1, $2) as client",
        [v4, v6],
      );
      return rows[0]!.client;
    });
  }

  it.each([
    // Supabase's edge (Cloudflare) names the client itself.
    [{ "cf-connecting-ip": "192.0.2.1", "x-forwarded-for": "198.51.100.1" }, "192.0.2.1"],
    // Otherwise the entry the last proxy added: the right-most, never the client-written left-most.
    [{ "x-forwarded-for": "203.0.113.66, 192.0.2.2" }, "192.0.2.2"],
    [{ "x-forwarded-for": " 203.0.113.66 ,  192.0.2.3 " }, "192.0.2.3"],
    // An IPv6 address counts per /56, what an ISP hands one customer, who may rotate through
    // its /64s.
    [{ "cf-connecting-ip": "2001:db8:1:2:aaaa:bbbb:cccc:dddd" }, "2001:db8:1::"],
    [{ "cf-connecting-ip": "2001:db8:1:ff::99" }, "2001:db8:1::"],
    [{ "cf-connecting-ip": "2001:db8:1:100::1" }, "2001:db8:1:100::"],
    // An IPv4 client seen through an IPv6 socket is that IPv4 client.
    [{ "cf-connecting-ip": "::ffff:192.0.2.4" }, "192.0.2.4"],
    // Something that is no address still counts, as itself.
    [{ "cf-connecting-ip": "unknown" }, "unknown"],
    // No headers at all: no client, never a bucket shared by all such requests.
    [{}, null],
  ])("by address, from %j, is %j", async (headers, expected) => {
    expect(await clientFor(headers)).toBe(expected);
  });

  it.each([
    // An IPv4 /24.
    [{ "cf-connecting-ip": "192.0.2.77" }, "192.0.2.0"],
    // An IPv6 /48: what one site, or one tunnel broker's customer, is given.
    [{ "cf-connecting-ip": "2001:db8:1:2:aaaa:bbbb:cccc:dddd" }, "2001:db8:1::"],
    [{ "cf-connecting-ip": "2001:db8:1:ffff::1" }, "2001:db8:1::"],
    [{ "cf-connecting-ip": "::ffff:192.0.2.77" }, "192.0.2.0"],
  ])("by network, from %j, is %j", async (headers, expected) => {
    expect(await clientFor(headers, 24, 48)).toBe(expected);
  });

  it("is unknown when no request is being served", async () => {
    expect(await clientFor(null)).toBeNull();
  });
});
