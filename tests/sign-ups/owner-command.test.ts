// `npm run sign-ups -- <verb>`, the owner's command, run as the owner runs it (a process of its
// own, its settings from the environment): against a project elsewhere (its URL and
// SUPABASE_SECRET_KEY; the endpoint logged in as authenticator stands in for a hosted
// project), against the local Supabase while it runs, and with no backend running, when it
// opens the data folder itself. Failures are one line, change nothing.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { SUPERUSER } from "../../tools/local-supabase/database/cluster.ts";
import { LOCK_FILE } from "../../tools/local-supabase/database/data-folder.ts";
import { openLocalDatabase } from "../../tools/local-supabase/database/local-database.ts";
import { connectPool } from "../../tools/local-supabase/database/pool.ts";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { withPausedProject } from "../support/answering.ts";
import { LEGACY_ANON_KEY as LOCAL_ANON_KEY } from "../support/legacy-keys.ts";
import { LOCAL_PUBLISHABLE_KEY, LOCAL_SECRET_KEY } from "../../config/local-supabase.ts";
import { normalizeSignUp } from "../../src/lib/sign-up-rules.ts";
import { register } from "../../src/lib/sign-up-request.ts";
import { createClient } from "../../src/lib/supabase-client.ts";
import { npmScriptArgs, runNpmScript, type ScriptRun } from "../../tools/npm-script.ts";
import { withoutTestEnvironment } from "../test-environment.ts";
import { freePorts } from "../../tools/processes.ts";
import { LIFT_SIGN_UP_LIMITS_FILE, openTestDatabase, rest } from "../support/database.ts";

const root = mkdtempSync(join(tmpdir(), "owner-command-"));
// As root, PostgreSQL runs as the postgres user, who must pass through to the data folders here.
chmodSync(root, 0o711);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * Runs the owner's command with exactly these settings: everything else it reads is set empty
 * (unset), so that a developer's .env counts for nothing. Asynchronous: the backend answers in
 * this process.
 */
function runOwnerCommand(args: string[], settings: Record<string, string>): Promise<ScriptRun> {
  return runNpmScript("sign-ups", args, { env: ownerCommandEnv(settings) });
}

/** The owner's command's environment: these settings, and every other it reads unset. */
function ownerCommandEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  return {
    ...withoutTestEnvironment(process.env),
    PUBLIC_SUPABASE_URL: "",
    SUPABASE_API_PORT: "",
    SUPABASE_SECRET_KEY: "",
    SUPABASE_DATA_DIR: join(root, "untouched"),
    SUPABASE_DB_URL: "",
    SUPABASE_SEED_FILE: "",
    SIGN_UPS_NOW: "",
    TZ: "UTC",
    ...settings,
  };
}

/**
 * The settings of a local Supabase on a throwaway database on `backend`'s port (as the tests'
 * backends are): there, nothing tells which project it serves, so the command takes it as this one's.
 */
const throwawayAt = (backend: LocalSupabase) => ({
  SUPABASE_API_PORT: new URL(backend.url).port,
  SUPABASE_DATA_DIR: "memory://",
});

/**
 * The command's clock set to `now` (SIGN_UPS_NOW): its days and hours are counted from there, and
 * a test compares them with days and hours of its own choosing, at any time of the real day.
 */
const at = (now: Date) => ({ SIGN_UPS_NOW: now.toISOString() });

/** A second after the latest sign-up: "now" for sign-ups just made through the page. */
async function justAfterTheLatest(owner: Database): Promise<Date> {
  const { rows } = await owner.query<{ latest: number }>(
    "select extract(epoch from max(created_at))::float8 * 1000 as latest from public.early_access",
  );
  return new Date(rows[0]!.latest + 1000);
}

/** Sign-ups as the page makes them: its own code, with the publishable key, one at a time. */
async function signUpThroughThePage(
  backend: LocalSupabase,
  people: Array<{ email: string; phone: string | null }>,
) {
  const client = createClient(backend.url, backend.publishableKey);
  for (const { email, phone } of people) {
    expect(await register(async () => client, normalizeSignUp(email, phone ?? ""))).toBe("registered");
    // Each a moment after the previous, so that "newest first" has one answer.
    await new Promise((resume) => setTimeout(resume, 20));
  }
}

/** Three people, typed as people type; the third's phone is a formula, as an attacker's would be. */
const PEOPLE = [
  { email: "ada@example.com", phone: "+44 20 7946 0000" },
  { email: "  Bob@Example.com ", phone: null },
  { email: "-cy@example.com", phone: '=HYPERLINK("http://x.io","y")' },
];
const STORED = ["ada@example.com", "bob@example.com", "-cy@example.com"];

/** The CSV's rows as a spreadsheet would read them: RFC 4180 fields, CRLF records. */
function csvRows(csv: string): string[][] {
  expect(csv.endsWith("\r\n")).toBe(true);
  return csv
    .slice(0, -2)
    .split("\r\n")
    .map((line) =>
      [...line.matchAll(/"((?:[^"]|"")*)"|(?<=^|,)(?=,|$)/g)].map((m) => (m[1] ?? "").replaceAll('""', '"')),
    );
}

async function storedEmails(owner: Database): Promise<string[]> {
  const { rows } = await owner.query<{ email: string }>(
    "select email from public.early_access order by email",
  );
  return rows.map(({ email }) => email);
}

describe.each([
  {
    // The endpoint logged in as authenticator is the hosted project's stand-in.
    name: "a Supabase project elsewhere (its URL and SUPABASE_SECRET_KEY)",
    settings: (backend: LocalSupabase) => ({
      PUBLIC_SUPABASE_URL: backend.url.replace("127.0.0.1", "localhost"),
      SUPABASE_SECRET_KEY: backend.secretKey,
    }),
  },
  {
    name: "the local Supabase while it runs on a throwaway database (no configuration but its port)",
    settings: throwawayAt,
  },
])("against $name", ({ settings }) => {
  let backend: LocalSupabase;
  let owner: Database;
  let env: Record<string, string>;
  let now: Date;
  beforeAll(async () => {
    let database: Database;
    ({ database, owner } = await openTestDatabase());
    backend = await startLocalSupabase({ database, port: 0, log: () => {} });
    await signUpThroughThePage(backend, PEOPLE);
    now = await justAfterTheLatest(owner);
    env = { ...settings(backend), ...at(now) };
  });
  afterAll(() => backend?.close());

  it("count says 3: today, this week, with a phone, marked; and charts them by day, as text when piped", async () => {
    const run = await runOwnerCommand(["count"], env);
    expect(run).toMatchObject({ status: 0, stderr: "" });
    const today = now.toISOString().slice(0, 10);
    const weekday = now.toLocaleDateString("en-US", { weekday: "short", timeZone: "UTC" });
    expect(run.stdout).toBe(
      "3 sign-ups\n3 today (since 00:00, UTC)\n3 in the last 7 days\n" +
        "2 with a phone (for the discount)\n0 marked for review\n\n" +
        `Sign-ups per day since the first, ${today}\n` +
        // Piped: 80 columns, no colour; the only day's bar is the longest a bar gets.
        `${weekday} ${today}  3 ${"█".repeat(60)}\n`,
    );
  });

  it("status says the project answers, how many signed up, and when last", async () => {
    const run = await runOwnerCommand(["status"], env);
    expect(run).toMatchObject({ status: 0, stderr: "" });
    expect(run.stdout).toMatch(
      /^The project at http:\/\/(localhost|127\.0\.0\.1):\d+ answers \(in \d+ ms\), with this repository's tables and views\.\n3 sign-ups, the latest \d{4}-\d\d-\d\d \d\d:\d\d \(UTC\), just now\.\n$/,
    );
  });

  it("list shows them newest first, as a table", async () => {
    const run = await runOwnerCommand(["list"], env);
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SIGNED UP \(UTC\) +EMAIL +PHONE$/);
    expect(lines.slice(1).map((line) => line.split(/ {2,}/)[1])).toEqual([...STORED].reverse());
    expect(lines[1]).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d +-cy@example\.com +=HYPERLINK\("http:\/\/x\.io","y"\)$/,
    );
    expect(run.stderr).toBe("3 sign-ups, newest first.\n");
  });

  it("export writes RFC 4180 CSV, oldest first, in which no cell starts a formula", async () => {
    const run = await runOwnerCommand(["export"], env);
    expect(run.status, run.stderr).toBe(0);
    const { rows: stored } = await owner.query<{ created_at: string }>(
      "select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US') as created_at from public.early_access order by created_at",
    );
    expect(csvRows(run.stdout)).toEqual([
      ["email", "phone", "created_at", "source", "review"],
      ["ada@example.com", "'+44 20 7946 0000", `${stored[0]!.created_at.replace(/\.?0+$/, "")}Z`, "", ""],
      ["bob@example.com", "", `${stored[1]!.created_at.replace(/\.?0+$/, "")}Z`, "", ""],
      [
        "'-cy@example.com",
        `'=HYPERLINK("http://x.io","y")`,
        `${stored[2]!.created_at.replace(/\.?0+$/, "")}Z`,
        "",
        "",
      ],
    ]);
    // Every field quoted, the phone's quotes doubled, so no spreadsheet splits or evaluates it.
    expect(run.stdout).toContain(`"'=HYPERLINK(""http://x.io"",""y"")"`);
    expect(run.stderr).toBe("Exported 3 sign-ups.\n");
  });

  it("export -o writes the same to a file only its owner can read", async () => {
    const file = join(root, `export-${Math.random()}.csv`);
    const [toFile, toStdout] = await Promise.all([
      runOwnerCommand(["export", "-o", file], env),
      runOwnerCommand(["export"], env),
    ]);
    expect(toFile.status, toFile.stderr).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(toStdout.stdout);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(toFile.stderr).toBe(`Exported 3 sign-ups to ${file}.\n`);
  });

  it("--limit and --since narrow the list", async () => {
    const limited = await runOwnerCommand(["list", "--limit", "1"], env);
    expect(limited.stdout.trimEnd().split("\n")).toHaveLength(2);
    expect(limited.stderr).toBe("The newest 1 of 3: --limit shows more, export writes them all.\n");
    const none = await runOwnerCommand(["list", "--since", "2999-01-01"], env);
    expect(none).toMatchObject({ status: 0, stdout: "", stderr: "No sign-ups since 2999-01-01 00:00.\n" });
  });

  it("remove takes out only that address, however it is typed, and count then says 2", async () => {
    const run = await runOwnerCommand(["remove", "  BOB@example.COM "], env);
    expect(run).toMatchObject({ status: 0, stdout: "", stderr: "Removed bob@example.com.\n" });
    expect(await storedEmails(owner)).toEqual(["-cy@example.com", "ada@example.com"]);
    expect((await runOwnerCommand(["count"], env)).stdout).toMatch(/^2 sign-ups\n/);

    const again = await runOwnerCommand(["remove", "bob@example.com"], env);
    expect(again).toMatchObject({
      status: 0,
      stderr: "bob@example.com is not on the list: nothing was removed.\n",
    });
    expect(await storedEmails(owner)).toEqual(["-cy@example.com", "ada@example.com"]);
  });
});

describe("counting by day", () => {
  let backend: LocalSupabase;
  /** The command's "now": late in a UTC day, as a count at any hour may be. */
  const NOW = new Date("2026-06-15T23:59:30Z");
  beforeAll(async () => {
    const { database, owner } = await openTestDatabase();
    // Faked: the sign-up times, which the database otherwise takes from its clock.
    await owner.query(
      `insert into public.early_access (email, created_at) values
         ('now@example.com', $1::timestamptz - interval '1 minute'),
         ('three-days@example.com', $1::timestamptz - interval '3 days'),
         ('eight-days@example.com', $1::timestamptz - interval '8 days'),
         ('last-year@example.com', $1::timestamptz - interval '1 year')`,
      [NOW.toISOString()],
    );
    backend = await startLocalSupabase({ database, port: 0, log: () => {} });
  });
  const env = () => ({ ...throwawayAt(backend), ...at(NOW) });
  afterAll(() => backend?.close());

  it("counts today from local midnight and the last 7 days with today, and charts the last 30 days", async () => {
    const run = await runOwnerCommand(["count"], env());
    const [summary, chart] = run.stdout.split("\n\n") as [string, string];
    expect(summary).toBe(
      "4 sign-ups\n1 today (since 00:00, UTC)\n2 in the last 7 days\n0 with a phone (for the discount)\n0 marked for review",
    );
    const [title, ...days] = chart.trimEnd().split("\n");
    expect(title).toBe("Sign-ups per day, the last 30 days");
    const dayBefore = (days: number) =>
      new Date(NOW.getTime() - days * 24 * 3600 * 1000).toISOString().slice(0, 10);
    // Every day of the 30 has its line; the three with a sign-up have its 1 and a full bar.
    expect(days.map((line) => line.slice(4, 14))).toEqual(
      Array.from({ length: 30 }, (_, index) => dayBefore(29 - index)),
    );
    const withSignUps = days.filter((line) => line.endsWith("█"));
    expect(withSignUps.map((line) => line.slice(4, 17))).toEqual(
      [dayBefore(8), dayBefore(3), dayBefore(0)].map((day) => `${day}  1`),
    );
    expect(days.filter((line) => line.endsWith("  0"))).toHaveLength(27);
  });

  it("count --hours charts the last 48 hours, hour by hour", async () => {
    const run = await runOwnerCommand(["count", "--hours"], env());
    const [title, ...hours] = run.stdout.split("\n\n")[1]!.trimEnd().split("\n");
    expect(title).toBe("Sign-ups per hour, the last 48 hours");
    expect(hours).toHaveLength(48);
    const thisHour = NOW.toISOString().slice(0, 13).replace("T", " ");
    expect(hours.at(-1)).toMatch(new RegExp(`^\\w{3} ${thisHour}:00  1 █+$`));
    expect(hours.slice(0, -1).every((line) => line.endsWith("  0"))).toBe(true);
  });

  it("lists from --since on", async () => {
    const since = new Date(NOW.getTime() - 5 * 24 * 3600 * 1000).toISOString().slice(0, 10);
    const run = await runOwnerCommand(["list", "--since", since], env());
    expect(run.stdout).toContain("now@example.com");
    expect(run.stdout).toContain("three-days@example.com");
    expect(run.stdout).not.toContain("eight-days@example.com");
  });
});

describe("sign-ups marked for review", () => {
  let backend: LocalSupabase;
  let owner: Database;
  /** 12 people behind one address within a minute: the last 2 past its pace of 10. */
  const crowd = Array.from({ length: 12 }, (_, index) => ({
    email: `person${index + 1}@example.com`,
    phone: null,
  }));
  beforeAll(async () => {
    let database: Database;
    // The migrations' limits, not lifted.
    ({ database, owner } = await openTestDatabase({ seed: null }));
    backend = await startLocalSupabase({ database, port: 0, log: () => {} });
    await signUpThroughThePage(backend, crowd);
    now = await justAfterTheLatest(owner);
  });
  afterAll(() => backend?.close());

  let now: Date;
  const env = () => ({ ...throwawayAt(backend), ...at(now) });

  it("count says how many are marked", async () => {
    const run = await runOwnerCommand(["count"], env());
    expect(run.stdout).toMatch(
      /^12 sign-ups\n12 today \(since 00:00, UTC\)\n12 in the last 7 days\n0 with a phone \(for the discount\)\n2 marked for review: 2 past a pace\n\n/,
    );
  });

  it("export gives a marked sign-up its source and the reason in words, and leaves the others' empty", async () => {
    const run = await runOwnerCommand(["export"], env());
    expect(run.status, run.stderr).toBe(0);
    const rows = csvRows(run.stdout);
    expect(rows[0]).toEqual(["email", "phone", "created_at", "source", "review"]);
    const unmarked = rows.slice(1, 11);
    expect(unmarked.every(([, , , source, review]) => source === "" && review === "")).toBe(true);
    const [eleventh, twelfth] = rows.slice(11);
    expect(eleventh!.slice(3)).toEqual([
      expect.stringMatching(/^[0-9a-f]{12}$/),
      "about 11 sign-ups per address per minute (pace: 10)",
    ]);
    expect(twelfth!.slice(3)).toEqual([eleventh![3], "about 12 sign-ups per address per minute (pace: 10)"]);
  });

  it("list --marked shows each source past a pace: its id, how many, first and last, a few addresses", async () => {
    const run = await runOwnerCommand(["list", "--marked"], env());
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^REASON +MARKED +FIRST \(UTC\) +LAST \(UTC\) +ADDRESSES$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(
      /^past a pace \(source [0-9a-f]{12}\) {2}2 +\d{4}-\d\d-\d\d \d\d:\d\d +\d{4}-\d\d-\d\d \d\d:\d\d +person11@example\.com, person12@example\.com$/,
    );
    expect(run.stderr).toBe(
      "2 marked sign-ups, latest first. export shows each with its reasons; remove --source <id> removes one " +
        "source's, remove --reason <reason> one reason's.\n",
    );
  });

  it("remove --source takes out that source's marked sign-ups and nothing else", async () => {
    const listed = await runOwnerCommand(["list", "--marked"], env());
    const source = /\(source ([0-9a-f]{12})\)/.exec(listed.stdout)![1]!;
    const run = await runOwnerCommand(["remove", "--source", source], env());
    expect(run).toMatchObject({
      status: 0,
      stdout: "",
      stderr: `Removed 2 marked sign-ups of source ${source}.\n`,
    });
    expect(await storedEmails(owner)).toEqual(
      crowd
        .slice(0, 10)
        .map(({ email }) => email)
        .sort(),
    );
    expect((await runOwnerCommand(["count"], env())).stdout).toMatch(
      /^10 sign-ups\n(.*\n){3}0 marked for review\n\n/,
    );

    const again = await runOwnerCommand(["remove", "--source", source], env());
    expect(again.stderr).toBe(`No marked sign-ups of source ${source}: nothing was removed.\n`);
    expect(await storedEmails(owner)).toHaveLength(10);
  });

  it("remove --reason pace takes out every sign-up marked past a pace, and nothing else", async () => {
    // 11 more from the same address at once: the 11th is past its pace of 10 however much the
    // bucket drained meanwhile; more of them are if it drained less.
    const more = Array.from({ length: 11 }, (_, index) => ({
      email: `later${index + 1}@example.com`,
      phone: null,
    }));
    await signUpThroughThePage(backend, more);
    const { rows } = await owner.query<{ email: string }>(
      "select e.email from public.early_access e join public.early_access_marks m on m.sign_up_id = e.id",
    );
    const marked = rows.map(({ email }) => email);
    expect(marked).toContain("later11@example.com");
    const before = await storedEmails(owner);
    const run = await runOwnerCommand(["remove", "--reason", "pace"], env());
    expect(run).toMatchObject({
      status: 0,
      stderr: `Removed ${marked.length} ${marked.length === 1 ? "sign-up" : "sign-ups"} past a pace.\n`,
    });
    expect(await storedEmails(owner)).toEqual(before.filter((email) => !marked.includes(email)));
    const again = await runOwnerCommand(["remove", "--reason", "pace"], env());
    expect(again.stderr).toBe("No sign-ups past a pace: nothing was removed.\n");
  });

  it.each([
    [["remove", "--source", "not-an-id"], /--source/],
    [
      ["remove", "a@example.com", "--source", "0123456789ab"],
      /an address, --source <id> or --reason <reason>: one/,
    ],
    [
      ["remove", "--reason", "typo", "--source", "0123456789ab"],
      /an address, --source <id> or --reason <reason>: one/,
    ],
    [["remove"], /an address, --source <id> or --reason <reason>: one of them/],
    [["remove", "--reason", "spam"], /--reason.*pace, disposable, typo, same-mailbox/],
  ])("%j is refused before anything is sent", async (args, message) => {
    const before = await storedEmails(owner);
    const run = await runOwnerCommand(args, env());
    expect(run.status).toBe(1);
    expect(run.stderr.trimEnd()).toMatch(message);
    expect(await storedEmails(owner)).toEqual(before);
  });
});

describe("addresses that look undeliverable or doubled", () => {
  let backend: LocalSupabase;
  let owner: Database;
  let now: Date;
  /** Six people at a normal pace, through the page: the middle three marked, none refused. */
  const SIX = [
    "ada.lovelace@gmail.com",
    "xk3j2@mailinator.com",
    "bob@gmial.com",
    "a.da.love.lace+launch@gmail.com",
    "wei@qq.com",
    "carol@example.org",
  ];
  const env = () => ({ ...throwawayAt(backend), ...at(now) });
  beforeAll(async () => {
    let database: Database;
    // The migrations' limits, not lifted: six sign-ups are within every pace.
    ({ database, owner } = await openTestDatabase({ seed: null }));
    backend = await startLocalSupabase({ database, port: 0, log: () => {} });
    await signUpThroughThePage(
      backend,
      SIX.map((email) => ({ email, phone: null })),
    );
    now = await justAfterTheLatest(owner);
  });
  afterAll(() => backend?.close());

  it("are all stored, and list --marked shows exactly the middle three, each with its reason", async () => {
    expect(await storedEmails(owner)).toEqual([...SIX].sort());
    const run = await runOwnerCommand(["list", "--marked"], env());
    expect(run.status, run.stderr).toBe(0);
    const [header, ...groups] = run.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^REASON +MARKED +FIRST \(UTC\) +LAST \(UTC\) +ADDRESSES$/);
    // The latest first; the earliest Gmail address, qq.com's and example.org's are not there.
    expect(
      groups.map((line) => line.split(/ {2,}/).filter((_, column) => column !== 2 && column !== 3)),
    ).toEqual([
      ["the same mailbox as ada.lovelace@gmail.com", "1", "a.da.love.lace+launch@gmail.com"],
      ["a likely typo of gmail.com (gmial.com)", "1", "bob@gmial.com"],
      ["a disposable domain (mailinator.com)", "1", "xk3j2@mailinator.com"],
    ]);
    expect(run.stderr).toMatch(/^3 marked sign-ups, latest first\./);
  });

  it("count says 3 are marked, with each reason's total", async () => {
    const run = await runOwnerCommand(["count"], env());
    expect(run.stdout.split("\n").slice(0, 5)).toEqual([
      "6 sign-ups",
      "6 today (since 00:00, UTC)",
      "6 in the last 7 days",
      "0 with a phone (for the discount)",
      "3 marked for review: 1 at a disposable domain, 1 at a likely mistyped domain, 1 to the same mailbox as an earlier one",
    ]);
  });

  it("export gives each its reason, and --without-marked leaves them out, saying how many", async () => {
    const all = await runOwnerCommand(["export"], env());
    expect(csvRows(all.stdout).map(([email, , , source, review]) => [email, source, review])).toEqual([
      ["email", "source", "review"],
      ["ada.lovelace@gmail.com", "", ""],
      ["xk3j2@mailinator.com", "", "a disposable domain (mailinator.com)"],
      ["bob@gmial.com", "", "a likely typo of gmail.com (gmial.com)"],
      ["a.da.love.lace+launch@gmail.com", "", "the same mailbox as ada.lovelace@gmail.com"],
      ["wei@qq.com", "", ""],
      ["carol@example.org", "", ""],
    ]);
    const sendable = await runOwnerCommand(["export", "--without-marked"], env());
    expect(sendable.status, sendable.stderr).toBe(0);
    expect(csvRows(sendable.stdout)).toEqual([
      csvRows(all.stdout)[0],
      ...[1, 5, 6].map((row) => csvRows(all.stdout)[row]),
    ]);
    expect(sendable.stderr).toBe(
      "Exported 3 sign-ups (left out 3 marked for review: list --marked shows why).\n",
    );
  });

  it("export --for a mailing tool writes its columns, without the marked, saying how many it left out", async () => {
    const run = await runOwnerCommand(["export", "--for", "mailchimp"], env());
    expect(run.status, run.stderr).toBe(0);
    const { rows } = await owner.query<{ line: string }>(
      `select email || ',,' || to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as line
         from public.early_access where email = any($1) order by created_at`,
      [["ada.lovelace@gmail.com", "wei@qq.com", "carol@example.org"]],
    );
    expect(run.stdout).toBe(
      ["Email Address,Phone Number,Signup Date", ...rows.map(({ line }) => line), ""].join("\r\n"),
    );
    expect(run.stderr).toBe(
      "Exported 3 sign-ups for Mailchimp (left out 3 marked for review: list --marked shows why; --with-marked keeps them).\n",
    );
  });

  it("remove --reason takes out one reason's sign-ups and nothing else", async () => {
    for (const [reason, gone] of [
      ["typo", "bob@gmial.com"],
      ["same-mailbox", "a.da.love.lace+launch@gmail.com"],
      ["disposable", "xk3j2@mailinator.com"],
    ] as const) {
      const before = await storedEmails(owner);
      const run = await runOwnerCommand(["remove", "--reason", reason], env());
      expect(run.status, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/^Removed 1 sign-up (at a|to the) /);
      expect(await storedEmails(owner)).toEqual(before.filter((email) => email !== gone));
    }
    const again = await runOwnerCommand(["remove", "--reason", "disposable"], env());
    expect(again.stderr).toBe("No sign-ups at a disposable domain: nothing was removed.\n");
    expect((await runOwnerCommand(["count"], env())).stdout).toMatch(
      /^3 sign-ups\n(.*\n){3}0 marked for review\n\n/,
    );
  });
});

describe("the counts the chart reads", () => {
  let backend: LocalSupabase;
  beforeAll(async () => {
    const { database, owner } = await openTestDatabase();
    // Faked: the sign-up times, to put them on either side of a quarter hour's and an hour's edge.
    await owner.exec(`
      insert into public.early_access (email, phone, created_at) values
        ('a@example.com', '555 0100', '2026-01-10 18:14:59.999999+00'),
        ('b@example.com', null, '2026-01-10 18:15:00+00'),
        ('c@example.com', '555 0102', '2026-01-10 18:59:59.999999+00'),
        ('d@example.com', null, '2026-01-10 19:00:00+00'),
        ('e@example.com', '555 0104', '2026-03-01 09:31:00+00');
      insert into public.early_access_marks (sign_up_id, source, reason)
      select id, '0123456789ab', 'test' from public.early_access where email in ('b@example.com', 'e@example.com');`);
    backend = await startLocalSupabase({ database, port: 0, log: () => {} });
  });
  afterAll(() => backend?.close());

  const read = (path: string, key: string) => rest(backend, { path, key });

  it("count sign-ups per UTC hour and per quarter of it, from a given hour on", async () => {
    const answer = await read(
      "early_access_hours?select=starts_at,sign_ups,by_quarter&starts_at=gte.2026-01-10T18:00:00Z&order=starts_at",
      backend.secretKey,
    );
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual([
      { starts_at: "2026-01-10T18:00:00+00:00", sign_ups: 3, by_quarter: [1, 1, 0, 1] },
      { starts_at: "2026-01-10T19:00:00+00:00", sign_ups: 1, by_quarter: [1, 0, 0, 0] },
      { starts_at: "2026-03-01T09:00:00+00:00", sign_ups: 1, by_quarter: [0, 0, 1, 0] },
    ]);
    const later = await read(
      "early_access_hours?select=starts_at&starts_at=gte.2026-01-10T19:00:01Z",
      backend.secretKey,
    );
    expect(await later.json()).toEqual([{ starts_at: "2026-03-01T09:00:00+00:00" }]);
  });

  it("count the whole list in one row: with a phone, marked, first and latest", async () => {
    const answer = await read("early_access_totals?select=*", backend.secretKey);
    expect(await answer.json()).toEqual([
      {
        sign_ups: 5,
        with_phone: 3,
        marked: 2,
        first_at: "2026-01-10T18:14:59.999999+00:00",
        last_at: "2026-03-01T09:31:00+00:00",
      },
    ]);
  });

  // The publishable key acts as anon (the local Supabase takes no legacy key, as new projects
  // hand out none).
  it("are for the secret key only: the publishable key reads nothing of them", async () => {
    for (const view of ["early_access_hours", "early_access_totals"]) {
      const answer = await read(`${view}?select=*`, LOCAL_PUBLISHABLE_KEY);
      expect(answer.status, view).toBe(401);
      expect((await answer.json()).code, view).toBe("42501");
    }
  });
});

describe("failures: one line, exit status 1, nothing changed", () => {
  let backend: LocalSupabase;
  let owner: Database;
  beforeAll(async () => {
    let database: Database;
    ({ database, owner } = await openTestDatabase());
    backend = await startLocalSupabase({ database, port: 0, log: () => {} });
    await signUpThroughThePage(backend, [{ email: "stays@example.com", phone: null }]);
  });
  afterAll(() => backend?.close());

  const project = () => ({ PUBLIC_SUPABASE_URL: backend.url.replace("127.0.0.1", "localhost") });

  async function expectFailure(args: string[], settings: Record<string, string>, message: RegExp) {
    const run = await runOwnerCommand(args, settings);
    expect(run.status, run.stdout).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.trimEnd()).toMatch(message);
    expect(run.stderr.trimEnd().split("\n"), run.stderr).toHaveLength(1);
    expect(await storedEmails(owner)).toEqual(["stays@example.com"]);
  }

  describe.each([
    ["the publishable key", LOCAL_PUBLISHABLE_KEY, /SUPABASE_SECRET_KEY holds a publishable key/],
    ["the legacy anon key", LOCAL_ANON_KEY, /SUPABASE_SECRET_KEY holds a publishable key/],
    ["something else", "not-a-key", /SUPABASE_SECRET_KEY holds no secret key/],
  ])("given %s instead of the secret key", (_, key, message) => {
    it.each([["count"], ["list"], ["export"], ["remove", "stays@example.com"]])(
      "%s refuses",
      async (...args) => {
        await expectFailure(args, { ...project(), SUPABASE_SECRET_KEY: key }, message);
      },
    );
  });

  it("a wrong secret key is refused by the API, and the message says where to get the right one", async () => {
    await expectFailure(
      ["remove", "stays@example.com"],
      { ...project(), SUPABASE_SECRET_KEY: "sb_secret_wrong" },
      /^error: The API at .+ refused the key from SUPABASE_SECRET_KEY as invalid: copy the project's secret key .+ Project Settings → API Keys\.$/,
    );
  });

  it("a project reached over plain http is not sent the key", async () => {
    await expectFailure(
      ["count"],
      { PUBLIC_SUPABASE_URL: "http://abc.supabase.co", SUPABASE_SECRET_KEY: backend.secretKey },
      /^error: PUBLIC_SUPABASE_URL \(http:\/\/abc\.supabase\.co\) is not https: the secret key is not sent/,
    );
  });

  it("a project without SUPABASE_SECRET_KEY is told where to get it", async () => {
    await expectFailure(["count"], project(), /^error: SUPABASE_SECRET_KEY is not set\. .+ API Keys/);
  });

  it("an unreachable backend is named, and an earlier export file is left as it was", async () => {
    const [port] = freePorts(1);
    const file = join(root, "earlier.csv");
    writeFileSync(file, "earlier");
    await expectFailure(
      ["export", "-o", file],
      { PUBLIC_SUPABASE_URL: `https://localhost:${port}`, SUPABASE_SECRET_KEY: backend.secretKey },
      new RegExp(
        `^error: Cannot reach the Supabase API at https://localhost:${port} \\(connect ECONNREFUSED [\\d.:]+\\)\\.$`,
      ),
    );
    expect(readFileSync(file, "utf8")).toBe("earlier");
  });

  it("a project without the table names the migration to push", async () => {
    const { database, owner: other } = await openTestDatabase();
    await other.exec("drop table public.early_access cascade");
    const empty = await startLocalSupabase({ database, port: 0, log: () => {} });
    try {
      const run = await runOwnerCommand(["remove", "ada@example.com"], throwawayAt(empty));
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(
        /^error: The project at .+ has no table public\.early_access: apply this repository's migrations \(npm run supabase -- db push --remote\), the first being supabase\/migrations\/\d{14}_early_access\.sql\.\n$/,
      );
    } finally {
      await empty.close();
    }
  });

  it("a project without the latest migration says which view it lacks, and to push the migrations", async () => {
    const { database, owner: other } = await openTestDatabase();
    await other.exec("drop view public.early_access_hours, public.early_access_totals");
    const older = await startLocalSupabase({ database, port: 0, log: () => {} });
    try {
      const run = await runOwnerCommand(["count"], throwawayAt(older));
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(
        /^error: The project at .+ has no view public\.early_access_totals: apply this repository's migrations \(npm run supabase -- db push --remote\)\.\n$/,
      );
    } finally {
      await older.close();
    }
  });

  it("a paused project is named as paused, with what to do", async () => {
    // Faked: a paused hosted project, which no local Supabase can be. Supabase answers every
    // request to one with its own status, 540 ("HTTP Status Codes" in Supabase's guides).
    await withPausedProject((url) =>
      expectFailure(
        ["count"],
        { PUBLIC_SUPABASE_URL: url, SUPABASE_SECRET_KEY: backend.secretKey },
        /^error: The project at http:\/\/localhost:\d+ is paused \(HTTP 540\): it answers nothing, sign-ups from the page included\. Resume it at the Supabase dashboard \(Resume project\)/,
      ),
    );
  });

  it.each([
    [["list", "--limit", "0"], /--limit/],
    [["list", "--since", "2026-02-30"], /--since/],
    [["remove", "nobody"], /"nobody" is not an email address/],
    [["export", "--for", "mailjet"], /--for.*mailchimp, brevo, resend, loops, kit/],
    [["export", "--with-marked"], /--with-marked and --country go with --for <tool>/],
    [["export", "--for", "brevo", "--country", "France"], /--country.*two-letter code/],
    [
      ["export", "--for", "brevo", "--with-marked", "--without-marked"],
      /--with-marked or --without-marked: one/,
    ],
    [["erase", "x"], /unknown command 'erase'/],
  ])("%j is refused before anything is sent", async (args, message) => {
    await expectFailure(args, throwawayAt(backend), message);
  });
});

describe("with no backend running", () => {
  const dataDir = join(root, "data");
  const settings = () => ({ SUPABASE_DATA_DIR: dataDir, SUPABASE_API_PORT: String(freePorts(1)[0]) });

  beforeAll(async () => {
    // What `npm start` left behind: a data folder with three sign-ups made through the page.
    const database = await openLocalDatabase({
      dataDir,
      seed: readFileSync(LIFT_SIGN_UP_LIMITS_FILE, "utf8"),
    });
    const backend = await startLocalSupabase({ database, port: 0, log: () => {} });
    await signUpThroughThePage(backend, PEOPLE);
    await backend.close();
  });

  it("opens the data folder for the length of the command: count, list, export, remove, count", async () => {
    expect((await runOwnerCommand(["count"], settings())).stdout).toMatch(/^3 sign-ups\n/);
    const list = await runOwnerCommand(["list"], settings());
    expect(
      list.stdout
        .trimEnd()
        .split("\n")
        .slice(1)
        .map((line) => line.split(/ {2,}/)[1]),
    ).toEqual([...STORED].reverse());
    const exported = await runOwnerCommand(["export"], settings());
    expect(csvRows(exported.stdout).map(([email]) => email)).toEqual([
      "email",
      ...STORED.map((e) => e.replace(/^-/, "'-")),
    ]);
    expect((await runOwnerCommand(["remove", "ada@example.com"], settings())).stderr).toBe(
      "Removed ada@example.com.\n",
    );
    expect((await runOwnerCommand(["count"], settings())).stdout).toMatch(/^2 sign-ups\n/);
    // The folder is free again: its lock went with the command.
    expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
  });
});

describe("while `npm run backend` is still starting", () => {
  it("waits for it to answer instead of opening its data folder too", async () => {
    const dataDir = join(root, "starting");
    const [port] = freePorts(1) as [number];
    const settings = { SUPABASE_DATA_DIR: dataDir, SUPABASE_API_PORT: String(port) };
    const backend = spawn(process.execPath, npmScriptArgs("backend"), {
      env: {
        ...withoutTestEnvironment(process.env),
        PUBLIC_SUPABASE_URL: "",
        SUPABASE_DB_URL: "",
        ...settings,
      },
      stdio: "ignore",
    });
    try {
      // The folder is taken before the database opens, and a new one takes seconds to create.
      while (!existsSync(join(dataDir, LOCK_FILE))) await new Promise((r) => setTimeout(r, 20));
      const run = await runOwnerCommand(["count"], settings);
      expect(run, run.stderr).toMatchObject({ status: 0, stdout: "No sign-ups yet: the list is empty.\n" });
    } finally {
      backend.kill("SIGINT");
      await new Promise((exited) => backend.on("exit", exited));
    }
  });
});

describe("while `npm run backend` is stopping", () => {
  /** Resolves once `condition` holds, asked every 20 ms. */
  async function until(condition: () => Promise<boolean>): Promise<void> {
    while (!(await condition())) await new Promise((resume) => setTimeout(resume, 20));
  }

  // `npm start` stops its backend the same way: answers no more, lets the answers in progress
  // finish, stops its PostgreSQL server, and only then lets the data folder go.
  it("waits for it to let the data folder go, saying so, then opens it", async () => {
    const dataDir = join(root, "stopping");
    const [port] = freePorts(1) as [number];
    const settings = { SUPABASE_DATA_DIR: dataDir, SUPABASE_API_PORT: String(port) };
    const url = `http://127.0.0.1:${port}`;
    const backend = spawn(process.execPath, npmScriptArgs("backend"), {
      env: {
        ...withoutTestEnvironment(process.env),
        PUBLIC_SUPABASE_URL: "",
        SUPABASE_DB_URL: "",
        ...settings,
      },
      stdio: "ignore",
    });
    const backendExited = new Promise((exited) => backend.on("exit", exited));
    const answers = () =>
      fetch(`${url}/rest/v1/`).then(
        (response) => (void response.body?.cancel(), true),
        () => false,
      );
    let server: Database | undefined;
    const { promise: released, resolve: release } = Promise.withResolvers<void>();
    try {
      await until(answers);
      await signUpThroughThePage(
        { url, publishableKey: LOCAL_PUBLISHABLE_KEY } as LocalSupabase,
        PEOPLE.slice(0, 1),
      );
      // Its stop held for as long as the test needs: an answer in progress waits on a lock the
      // test takes on the backend's own server (postmaster.pid's fourth line is its port).
      const serverPort = readFileSync(join(dataDir, "postgresql", "postmaster.pid"), "utf8").split("\n")[3];
      const pool = connectPool({
        url: `postgres://${SUPERUSER}@127.0.0.1:${serverPort}/postgres`,
        poolSize: 2,
      });
      server = pool;
      const { promise: locked, resolve: lockTaken } = Promise.withResolvers<void>();
      const holding = pool.transaction(async (tx) => {
        await tx.exec("lock table public.early_access in access exclusive mode");
        lockTaken();
        await released;
      });
      await locked;
      const answer = fetch(`${url}/rest/v1/early_access?select=email`, {
        headers: { apikey: LOCAL_SECRET_KEY, Authorization: `Bearer ${LOCAL_SECRET_KEY}` },
      }).catch(() => null);
      await until(async () => {
        const { rows } = await pool.query<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock'",
        );
        return rows[0]!.n > 0;
      });
      backend.kill("SIGTERM");
      await until(async () => !(await answers()));

      // The command, started while the backend stops: it says it waits, and waits.
      const command = spawn(process.execPath, [...npmScriptArgs("sign-ups"), "count"], {
        env: ownerCommandEnv(settings),
        stdio: "pipe",
      });
      let stdout = "";
      let stderr = "";
      command.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
      const said = new Promise<void>((heard) =>
        command.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk;
          if (stderr.includes("\n")) heard();
        }),
      );
      const status = new Promise((exited) => command.on("close", exited));
      await said;
      expect(stderr).toMatch(
        new RegExp(
          `^Process ${backend.pid} \\(.+tools/backend\\.ts\\) holds the data folder .+stopping and does not answer at ${url}: ` +
            "waiting for it to answer, or to stop and let the folder go \\(at most 30 s\\)\\.\n$",
        ),
      );
      // The backend's stop goes on: it ends, and the command opens the folder and counts.
      release();
      await holding;
      await answer;
      await pool.close();
      server = undefined;
      expect(await status, stderr).toBe(0);
      expect(stdout).toMatch(/^1 sign-up\n/);
      expect(await backendExited).toBe(0);
    } finally {
      // However the test went, the backend stops as it should, its server with it.
      release();
      await server?.close();
      backend.kill("SIGINT");
      await backendExited;
    }
  });
});

describe("while another project's backend answers at the API port", () => {
  it("is refused, naming the folder, and removes nothing from that backend's list", async () => {
    // `npm start` of another checkout (or the Supabase CLI's own stack, whose local secret key is
    // this one too) holds the port; this project's data folder has no holder.
    const other = await openLocalDatabase({ dataDir: join(root, "other-project") });
    await other.transaction(async (tx) => {
      await tx.exec("set local role service_role");
      await tx.exec("insert into public.early_access (email) values ('someone@example.com')");
    });
    const backend = await startLocalSupabase({ database: other, port: 0, log: () => {} });
    try {
      const run = await runOwnerCommand(["remove", "someone@example.com"], {
        SUPABASE_API_PORT: new URL(backend.url).port,
        SUPABASE_DATA_DIR: join(root, "this-project"),
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toMatch(/no process holds this project's data folder \(.*this-project\)/);
      const left = await other.transaction(async (tx) => {
        await tx.exec("set local role service_role");
        return tx.query<{ email: string }>("select email from public.early_access");
      });
      expect(left.rows).toEqual([{ email: "someone@example.com" }]);
    } finally {
      await backend.close();
    }
  });
});

it("never touches the data folder while a backend answers", () => {
  expect(existsSync(join(root, "untouched"))).toBe(false);
});
