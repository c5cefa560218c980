// The owner's verbs in this process (tools/sign-ups/verbs/): each given its sign-ups, a clock and
// output streams of the test's own, first a stand-in for the API that records what it is asked,
// then the local Supabase, where a removal must take as few requests as the API allows.
import { createClient } from "@supabase/supabase-js";
import mailchecker from "mailchecker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { inBatches, signUpsClient } from "../../tools/sign-ups/client.ts";
import { OwnerCommandError } from "../../tools/sign-ups/failures.ts";
import type { DomainCount, SignUpRow, SignUps, Totals } from "../../tools/sign-ups/rows.ts";
import type { HourCount } from "../../tools/sign-ups/growth.ts";
import { domainMark } from "../../tools/sign-ups/marks.ts";
import { count } from "../../tools/sign-ups/verbs/count.ts";
import { exportList } from "../../tools/sign-ups/verbs/export.ts";
import { list, listMarked } from "../../tools/sign-ups/verbs/list.ts";
import { removeAddress, removeReason } from "../../tools/sign-ups/verbs/remove.ts";
import { status } from "../../tools/sign-ups/verbs/status.ts";
import { watch } from "../../tools/sign-ups/verbs/watch.ts";
import { capture } from "../support/capture.ts";
import { openTestDatabase } from "../support/database.ts";

/** The calls a stand-in was asked to make, in order, with their arguments. */
type Calls = Array<[string, ...unknown[]]>;

/** A stand-in for the API: an empty list unless told otherwise, every call recorded. */
function fakeSignUps(overrides: Partial<SignUps> = {}): { signUps: SignUps; calls: Calls } {
  const calls: Calls = [];
  const totals: Totals = { sign_ups: 0, with_phone: 0, marked: 0, first_at: null, last_at: null };
  const base: SignUps = {
    totals: async () => totals,
    hours: async () => [],
    sources: async () => [],
    pages: () => ({ total: () => 0, [Symbol.asyncIterator]: async function* () {} }),
    domainCounts: async () => [],
    domains: async () => [],
    repeats: async () => [],
    mailboxes: async () => [],
    remove: async () => false,
    removeSource: async () => 0,
    removePastPace: async () => 0,
    removeAtDomains: async () => 0,
    removeIds: async () => 0,
  };
  const signUps = Object.fromEntries(
    Object.entries({ ...base, ...overrides }).map(([name, method]) => [
      name,
      (...args: unknown[]) => {
        calls.push([name, ...args]);
        return (method as (...args: unknown[]) => unknown)(...args);
      },
    ]),
  ) as unknown as SignUps;
  return { signUps, calls };
}

/** The pages of `rows`, as client.ts hands them on. */
function pagesOf(rows: SignUpRow[]): SignUps["pages"] {
  return () => {
    let total: number | null = null;
    return {
      total: () => total,
      [Symbol.asyncIterator]: async function* () {
        total = rows.length;
        yield rows;
      },
    };
  };
}

const NOW = new Date("2026-11-25T18:00:00Z");

function contextOf(signUps: SignUps) {
  const stdout = capture();
  const stderr = capture();
  return { context: { signUps, now: NOW, zone: "UTC", stdout, stderr }, stdout, stderr };
}

const row = (email: string, created_at: string, review: string | null = null): SignUpRow => ({
  id: `id-${email}`,
  email,
  phone: null,
  created_at,
  source: review ? "0123456789ab" : null,
  review,
});

describe("count", () => {
  it("says the list is empty, and draws no chart", async () => {
    const { context, stdout } = contextOf(fakeSignUps().signUps);
    await count(context);
    expect(stdout.text()).toBe("No sign-ups yet: the list is empty.\n");
  });

  it("sums the database's counts and the command's marks, and charts the days since the first", async () => {
    const totals: Totals = {
      sign_ups: 6,
      with_phone: 2,
      marked: 1,
      first_at: "2026-11-24T10:00:00+00:00",
      last_at: "2026-11-25T17:00:00+00:00",
    };
    const hours: HourCount[] = [
      { starts_at: "2026-11-24T10:00:00+00:00", sign_ups: 2, by_quarter: [2, 0, 0, 0] },
      { starts_at: "2026-11-25T17:00:00+00:00", sign_ups: 4, by_quarter: [0, 4, 0, 0] },
    ];
    const domains: DomainCount[] = [
      { domain: "example.com", sign_ups: 3, past_pace: 1, repeats: 0, repeats_past_pace: 0 },
      { domain: "mailinator.com", sign_ups: 2, past_pace: 0, repeats: 0, repeats_past_pace: 0 },
      { domain: "gmail.com", sign_ups: 1, past_pace: 0, repeats: 1, repeats_past_pace: 0 },
    ];
    const { signUps, calls } = fakeSignUps({
      totals: async () => totals,
      hours: async () => hours,
      domainCounts: async () => domains,
    });
    const { context, stdout } = contextOf(signUps);
    await count(context);
    expect(stdout.text()).toBe(
      [
        "6 sign-ups",
        "4 today (since 00:00, UTC)",
        "6 in the last 7 days",
        "2 with a phone (for the discount)",
        "4 marked for review: 1 past a pace, 2 at a disposable domain, 1 to the same mailbox as an earlier one",
        "",
        "Sign-ups per day since the first, 2026-11-24",
        `Tue 2026-11-24  2 ${"█".repeat(30)}`,
        `Wed 2026-11-25  4 ${"█".repeat(60)}`,
        "",
      ].join("\n"),
    );
    // The three reads at once, the hours from the longest window's first (30 days and 14 hours back).
    expect(calls.map(([name]) => name).sort()).toEqual(["domainCounts", "hours", "totals"]);
    expect(calls.find(([name]) => name === "hours")![1]).toEqual(new Date("2026-10-26T10:00:00Z"));
  });
});

describe("watch", () => {
  const refused = async () => ({ status: 400, constraint: "early_access_email_check" });

  it("on an empty list says so, and that the project and the page's path answer", async () => {
    const { context, stdout } = contextOf(fakeSignUps().signUps);
    await watch(context, { url: "https://abc.supabase.co", checkPage: refused });
    expect(stdout.text()).toBe(
      "## Sign-ups, 2026-11-25 (UTC)\n\nNo sign-ups yet: the list is empty.\n\n" +
        "The project answers: the list was read with the secret key, and the page's own sign-up path answered " +
        "the publishable key as it should (an address the database refuses: HTTP 400, `early_access_email_check`; " +
        "nothing stored).\n\n" +
        "The site is not watched: set the repository variable `SITE_URL` to its address (README: GitHub's jobs).\n",
    );
  });

  it("with a site: reports it, and passes its warnings on", async () => {
    const { context, stdout } = contextOf(fakeSignUps().signUps);
    const warnings: string[] = [];
    const warning = { title: "Site certificate ends soon", message: "ends in 5 days" };
    const site = async () => ({
      url: "https://example.com",
      status: 200,
      certificate: { validTo: new Date("2026-11-30T12:00:00Z"), daysLeft: 4 },
      warnings: [warning],
    });
    await watch(context, {
      url: "https://abc.supabase.co",
      checkPage: refused,
      checkSite: site,
      warn: (title, message) => warnings.push(`${title}: ${message}`),
    });
    expect(stdout.text()).toContain(
      "\nThe site answers: https://example.com (HTTP 200), sending sign-ups to this project; its certificate ends " +
        "on 2026-11-30, in 4 days. **Warning**: ends in 5 days\n",
    );
    expect(warnings).toEqual(["Site certificate ends soon: ends in 5 days"]);
  });

  it("with a site that fails: reports the list and the site's failure, then fails with it", async () => {
    const { context, stdout } = contextOf(fakeSignUps().signUps);
    const down = () =>
      Promise.reject(new OwnerCommandError("The site at https://example.com answered 503", "Site down"));
    await expect(
      watch(context, { url: "https://abc.supabase.co", checkPage: refused, checkSite: down }),
    ).rejects.toMatchObject({ title: "Site down" });
    expect(stdout.text()).toMatch(
      /^## Sign-ups, .+\n\*\*The site fails\*\*: The site at https:\/\/example\.com answered 503\n$/s,
    );
  });

  it("removes what the page's path stored, and fails", async () => {
    const { signUps, calls } = fakeSignUps({ removeIds: async () => 1 });
    const { context, stdout } = contextOf(signUps);
    const stored = async () => ({ storedId: "the-row" });
    await expect(watch(context, { url: "https://abc.supabase.co", checkPage: stored })).rejects.toThrow(
      /stored "sign-ups watch: not an address", which the database must refuse/,
    );
    expect(calls.filter(([name]) => name === "removeIds")).toEqual([["removeIds", ["the-row"]]]);
    expect(stdout.text()).toBe("");
  });

  it("removes what the page's path stored though the list's reads failed, and fails with the reads' failure", async () => {
    const { signUps, calls } = fakeSignUps({
      totals: () => Promise.reject(new OwnerCommandError("the list's read")),
      removeIds: async () => 1,
    });
    const { context } = contextOf(signUps);
    const stored = async () => ({ storedId: "the-row" });
    await expect(watch(context, { url: "https://abc.supabase.co", checkPage: stored })).rejects.toThrow(
      "the list's read",
    );
    expect(calls.filter(([name]) => name === "removeIds")).toEqual([["removeIds", ["the-row"]]]);
  });

  it("reports the secret key's failure first when both fail", async () => {
    const { context } = contextOf(
      fakeSignUps({ totals: () => Promise.reject(new OwnerCommandError("the secret key's")) }).signUps,
    );
    const failing = () => Promise.reject(new OwnerCommandError("the page's"));
    await expect(watch(context, { url: "https://abc.supabase.co", checkPage: failing })).rejects.toThrow(
      "the secret key's",
    );
  });
});

describe("status", () => {
  const quiet = {
    totals: async (): Promise<Totals> => ({
      sign_ups: 1,
      with_phone: 0,
      marked: 0,
      first_at: "2026-11-20T18:00:00+00:00",
      last_at: "2026-11-20T18:00:00+00:00",
    }),
  };

  it.each([
    // A project elsewhere, quiet for 5 days: the warning of Supabase's pausing.
    { local: false, warned: true },
    // The local Supabase never pauses.
    { local: true, warned: false },
  ])("after 5 quiet days, local $local: warned $warned", async ({ local, warned }) => {
    const { context, stdout } = contextOf(fakeSignUps(quiet).signUps);
    await status(context, { url: "https://abc.supabase.co", local });
    const lines = stdout.text().trimEnd().split("\n");
    expect(lines[0]).toMatch(/^The project at https:\/\/abc\.supabase\.co answers \(in \d+ ms\)/);
    expect(lines[1]).toMatch(/^1 sign-up, the latest \d{4}-\d\d-\d\d \d\d:\d\d \(UTC\), 5 days ago\.$/);
    expect(lines.length).toBe(warned ? 3 : 2);
  });
});

describe("list", () => {
  it("shows the newest first, and says how many on stderr", async () => {
    const rows = [
      row("b@example.com", "2026-11-25T10:00:00+00:00"),
      row("a@example.com", "2026-11-24T10:00:00+00:00"),
    ];
    const { signUps, calls } = fakeSignUps({ pages: pagesOf(rows) });
    const { context, stdout, stderr } = contextOf(signUps);
    await list(context, {});
    expect(stdout.text().split("\n")[0]).toMatch(/^SIGNED UP \(UTC\) +EMAIL +PHONE$/);
    expect(stdout.text()).toMatch(/b@example\.com.*\n.*a@example\.com.*\n$/);
    expect(stderr.text()).toBe("2 sign-ups, newest first.\n");
    expect(calls).toEqual([["pages", { since: undefined, newestFirst: true, limit: 50 }]]);
  });

  it("--marked says when nothing is marked", async () => {
    const { context, stdout, stderr } = contextOf(fakeSignUps().signUps);
    await listMarked(context);
    expect([stdout.text(), stderr.text()]).toEqual(["", "No sign-ups are marked for review.\n"]);
  });
});

describe("export", () => {
  const rows = [
    row("ada@example.com", "2026-11-24T10:00:00.5+00:00"),
    row("xk3j2@mailinator.com", "2026-11-24T11:00:00+00:00"),
    row(
      "bob@example.com",
      "2026-11-24T12:00:00+00:00",
      "about 11 sign-ups per address per minute (pace: 10)",
    ),
  ];
  const signUps = () =>
    fakeSignUps({
      pages: pagesOf(rows),
      domainCounts: async () => [
        { domain: "mailinator.com", sign_ups: 1, past_pace: 0, repeats: 0, repeats_past_pace: 0 },
      ],
    }).signUps;

  it.each([
    {
      case: "everyone, each with the reasons of their marks",
      withoutMarked: false,
      emails: ["ada@example.com", "xk3j2@mailinator.com", "bob@example.com"],
      message: "Exported 3 sign-ups.\n",
    },
    {
      case: "without the marked, saying how many it left out",
      withoutMarked: true,
      emails: ["ada@example.com"],
      message: "Exported 1 sign-up (left out 2 marked for review: list --marked shows why).\n",
    },
  ])("$case", async ({ withoutMarked, emails, message }) => {
    const { context, stdout, stderr } = contextOf(signUps());
    await exportList(context, { withoutMarked });
    const lines = stdout.text().trimEnd().split("\r\n");
    expect(lines[0]).toBe('"email","phone","created_at","source","review"');
    expect(lines.slice(1).map((line) => line.split(",")[0])).toEqual(emails.map((email) => `"${email}"`));
    expect(stderr.text()).toBe(message);
  });
});

describe("remove", () => {
  it.each([
    // However it was typed: spaces and capitals, as the database stores it.
    ["  BOB@Example.COM ", "bob@example.com"],
    ["ada@example.com", "ada@example.com"],
  ])("%j asks for %j", async (typed, stored) => {
    const { signUps, calls } = fakeSignUps({ remove: async () => true });
    const { context, stderr } = contextOf(signUps);
    await removeAddress(context, typed);
    expect(calls).toEqual([["remove", stored]]);
    expect(stderr.text()).toBe(`Removed ${stored}.\n`);
  });

  it("refuses what is no address before asking anything", async () => {
    const { signUps, calls } = fakeSignUps();
    await expect(removeAddress(contextOf(signUps).context, "nobody")).rejects.toThrow(
      new OwnerCommandError('"nobody" is not an email address.', "Wrong arguments"),
    );
    expect(calls).toEqual([]);
  });

  const domains: DomainCount[] = [
    { domain: "mailinator.com", sign_ups: 3, past_pace: 0, repeats: 0, repeats_past_pace: 0 },
    { domain: "gmial.com", sign_ups: 1, past_pace: 0, repeats: 0, repeats_past_pace: 0 },
    { domain: "example.com", sign_ups: 9, past_pace: 0, repeats: 0, repeats_past_pace: 0 },
  ];
  it.each([
    // Past a pace: the database's marks, in one call.
    { reason: "pace", call: ["removePastPace"], message: "Removed 2 sign-ups past a pace.\n" },
    {
      reason: "disposable",
      call: ["removeAtDomains", ["mailinator.com"]],
      message: "Removed 2 sign-ups at a disposable domain.\n",
    },
    {
      reason: "typo",
      call: ["removeAtDomains", ["gmial.com"]],
      message: "Removed 2 sign-ups at a likely mistyped domain.\n",
    },
    {
      reason: "same-mailbox",
      call: ["removeIds", ["r1", "r2"]],
      message: "Removed 2 sign-ups to the same mailbox as an earlier one.\n",
    },
  ] as const)(
    "--reason $reason removes what the marks say, in one call",
    async ({ reason, call, message }) => {
      const { signUps, calls } = fakeSignUps({
        domainCounts: async () => domains,
        repeats: async () => [
          {
            id: "r1",
            email: "a.da@gmail.com",
            created_at: "2026-11-24T10:00:00+00:00",
            repeats: "ada@gmail.com",
          },
          {
            id: "r2",
            email: "ada+x@gmail.com",
            created_at: "2026-11-24T11:00:00+00:00",
            repeats: "ada@gmail.com",
          },
        ],
        removePastPace: async () => 2,
        removeAtDomains: async () => 2,
        removeIds: async () => 2,
      });
      const { context, stderr } = contextOf(signUps);
      await removeReason(context, reason);
      expect(calls.filter(([name]) => name.startsWith("remove"))).toEqual([call]);
      expect(stderr.text()).toBe(message);
    },
  );
});

describe("inBatches", () => {
  const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;
  it.each([
    { case: "none: no request", values: [], sizes: [] },
    { case: "a few: one request", values: [id(1), id(2)], sizes: [2] },
    // 36 characters and the room for a comma and quotes: 93 ids a request.
    {
      case: "250 ids: three requests",
      values: Array.from({ length: 250 }, (_, n) => id(n)),
      sizes: [93, 93, 64],
    },
    // Encoded, a character beyond ASCII takes more room than one.
    {
      case: "long encoded values: fewer a request",
      values: Array(10).fill("é".repeat(300)),
      sizes: [2, 2, 2, 2, 2],
    },
  ])("$case", ({ values, sizes }) => {
    const batches = inBatches(values);
    expect(batches.map((batch) => batch.length)).toEqual(sizes);
    expect(batches.flat()).toEqual(values);
  });
});

/** 200 domains that mailchecker's list names and the command marks as disposable (not as typos). */
const SOME_DISPOSABLE = [...mailchecker.blacklist()]
  .filter((domain) => /^[a-z0-9-]+\.com$/.test(domain) && domainMark(domain)?.reason === "disposable")
  .slice(0, 200);

describe("removals on the local Supabase", () => {
  let backend: LocalSupabase;
  let owner: Database;
  /** The requests the command sent since the last look, by method. */
  let requests: string[] = [];
  let signUps: SignUps;

  beforeAll(async () => {
    let database: Database;
    ({ database, owner } = await openTestDatabase());
    backend = await startLocalSupabase({ database, port: 0, log: () => {} });
    const counting: typeof fetch = (input, init) => {
      requests.push(init?.method ?? "GET");
      return fetch(input, init);
    };
    const client = createClient(backend.url, backend.secretKey, {
      auth: { persistSession: false },
      global: { fetch: counting },
    });
    signUps = signUpsClient(client, { url: backend.url, keySource: "the local secret key" });
  });
  afterAll(() => backend?.close());

  async function stored(): Promise<string[]> {
    const { rows } = await owner.query<{ email: string }>(
      "select email from public.early_access order by email",
    );
    return rows.map(({ email }) => email);
  }

  it.each([
    {
      // 250 later sign-ups to one Gmail mailbox: their ids in three requests.
      reason: "same-mailbox",
      seed: `insert into public.early_access (email, created_at) values ('ada@gmail.com', '2026-11-01Z');
             insert into public.early_access (email, created_at)
             select 'a.da+' || n || '@gmail.com', timestamptz '2026-11-02Z' + interval '1 minute' * n
               from generate_series(1, 250) n;`,
      removed: 250,
      deletes: 3,
      // The earliest sign-up to the mailbox is not marked.
      left: ["ada@gmail.com"],
    },
    {
      // 200 disposable domains from mailchecker's list: their names in a few requests.
      reason: "disposable",
      seed: `insert into public.early_access (email)
             select 'someone@' || d from unnest($1::text[]) d;`,
      removed: 200,
      deletes: inBatches(SOME_DISPOSABLE).length,
      left: [],
    },
    {
      // Every sign-up past a pace, whatever its source: one request.
      reason: "pace",
      seed: `insert into public.early_access (email) select 'crowd' || n || '@example.com' from generate_series(1, 300) n;
             insert into public.early_access_marks (sign_up_id, source, reason)
             select id, substr(md5(email), 1, 12), 'test' from public.early_access where email like 'crowd%';`,
      removed: 300,
      deletes: 1,
      left: [],
    },
  ] as const)(
    "--reason $reason removes $removed sign-ups in $deletes DELETE",
    async ({ reason, seed, removed, deletes, left }) => {
      await owner.exec("delete from public.early_access");
      if (seed.includes("$1")) await owner.query(seed, [SOME_DISPOSABLE]);
      else await owner.exec(seed);
      await owner.exec("insert into public.early_access (email) values ('stays@example.com')");
      requests = [];
      const { context, stderr } = contextOf(signUps);
      await removeReason(context, reason);
      expect(stderr.text()).toMatch(new RegExp(`^Removed ${removed} sign-ups `));
      expect(requests.filter((method) => method === "DELETE")).toHaveLength(deletes);
      expect(await stored()).toEqual([...left, "stays@example.com"]);
    },
  );
});
