// `npm run sign-ups -- watch`, which a scheduled job runs: it reads the list with the secret key,
// sends the page's own sign-up request with the publishable key (an address the database's check
// refuses, so that nothing is stored), and reports in Markdown; it
// fails, in one line saying what to do, when the project or either key does not answer as it
// should. In this process against the local Supabase and servers that answer as a paused or
// failing project does, then as the job runs it, a process of its own.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { createClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_PUBLISHABLE_KEY } from "../../config/local-supabase.ts";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { runNpmScript } from "../../tools/npm-script.ts";
import { signUpsClient } from "../../tools/sign-ups/client.ts";
import type { Target } from "../../tools/sign-ups/failures.ts";
import { checkSignUpPath } from "../../tools/sign-ups/probe.ts";
import { watch } from "../../tools/sign-ups/verbs/watch.ts";
import { withoutTestEnvironment } from "../test-environment.ts";
import { answering, PAUSED, withPausedProject } from "../support/answering.ts";
import { capture } from "../support/capture.ts";
import { openTestDatabase } from "../support/database.ts";

const root = mkdtempSync(join(tmpdir(), "watch-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The command's "now": an hour after the latest sign-up below. */
const NOW = new Date("2026-11-25T18:00:00Z");

/** Three sign-ups: one today, one 2 days ago (this week), one 10 days ago; one at a disposable domain. */
const SEED = `
  insert into public.early_access (email, phone, created_at) values
    ('ada@example.com', '+44 20 7946 0000', '2026-11-25T17:00:00Z'),
    ('xk3j2@mailinator.com', null, '2026-11-23T09:00:00Z'),
    ('bob@example.com', null, '2026-11-15T09:00:00Z');`;

const SUMMARY = [
  "## Sign-ups, 2026-11-25 (UTC)",
  "",
  "- **3** in all",
  "- **2** new in the last 7 days (1 today, since 00:00)",
  "- **1** with a phone (for the discount)",
  "- **1** marked for review: 1 at a disposable domain",
  "",
  "The project answers: the list was read with the secret key, and the page's own sign-up path answered " +
    "the publishable key as it should (an address the database refuses: HTTP 400, `early_access_email_check`; " +
    "nothing stored).",
  "",
  "The site is not watched: set the repository variable `SITE_URL` to its address (README: GitHub's jobs).",
  "",
  "### Sign-ups per day since the first, 2026-11-15",
  "",
  "```text",
];

/**
 * `watch` in this process against `url`, with these keys, as cli.ts composes it. With
 * `readsAfterThePage`, the list's reads wait for the page's path to have answered.
 */
async function watchInProcess(
  url: string,
  secretKey: string,
  publishableKey: string,
  { summaryFile, readsAfterThePage = false }: { summaryFile?: string; readsAfterThePage?: boolean } = {},
) {
  const options = { auth: { persistSession: false, autoRefreshToken: false } };
  const target: Target = { url, keySource: "SUPABASE_SECRET_KEY" };
  const signUps = signUpsClient(createClient(url, secretKey, options), target);
  const page = createClient(url, publishableKey, options);
  const pageAnswer = Promise.withResolvers<void>();
  const checkPage = () =>
    checkSignUpPath(page, { url, keySource: "PUBLIC_SUPABASE_PUBLISHABLE_KEY" }).finally(pageAnswer.resolve);
  if (readsAfterThePage)
    for (const read of ["totals", "hours", "domainCounts"] as const) {
      const direct = signUps[read] as (...args: unknown[]) => Promise<never>;
      signUps[read] = (async (...args: unknown[]) => {
        await pageAnswer.promise;
        return direct(...args);
      }) as never;
    }
  const stdout = capture();
  const stderr = capture();
  const context = { signUps, now: NOW, zone: "UTC", stdout, stderr };
  const run = watch(context, { url, checkPage, summaryFile });
  return { run, stdout };
}

/** A summary file with an earlier step's words, which watch must keep. */
function summaryFile(): string {
  const file = join(root, `summary-${Math.random()}.md`);
  writeFileSync(file, "# An earlier step\n");
  return file;
}

describe("against the local Supabase", () => {
  let backend: LocalSupabase;
  let owner: Database;
  beforeAll(async () => {
    let database: Database;
    // The migrations' sign-up limits, not lifted, as on the live project.
    ({ database, owner } = await openTestDatabase({ seed: null }));
    await owner.exec(SEED);
    backend = await startLocalSupabase({ database, port: 0, log: () => {} });
  });
  afterAll(() => backend?.close());

  /**
   * What a sign-up stored would leave: its row, and any mark. (The rules count the probe as one
   * failure of the runner's address: one a day.)
   */
  async function stored() {
    const { rows } = await owner.query<{ emails: string[]; marks: number }>(`
      select (select array_agg(email order by email) from public.early_access) as emails,
             (select count(*)::integer from public.early_access_marks) as marks`);
    return rows[0]!;
  }

  it("reports in Markdown, on stdout and after what the summary file held; the page's path stores nothing", async () => {
    const before = await stored();
    const file = summaryFile();
    const { run, stdout } = await watchInProcess(backend.url, backend.secretKey, backend.publishableKey, {
      summaryFile: file,
    });
    await run;
    const report = stdout.text();
    expect(report.split("\n").slice(0, SUMMARY.length)).toEqual(SUMMARY);
    // The chart: its 11 days, and the code block closed.
    expect(report.trimEnd().split("\n").slice(SUMMARY.length)).toHaveLength(12);
    expect(report.trimEnd().endsWith("```")).toBe(true);
    expect(readFileSync(file, "utf8")).toBe(`# An earlier step\n${report}`);
    expect(await stored()).toEqual(before);
    // Whereas a sign-up the checks let through is stored.
    const visitor = createClient(backend.url, backend.publishableKey, { auth: { persistSession: false } });
    expect((await visitor.from("early_access").insert({ email: "control@example.com" })).status).toBe(201);
    expect((await stored()).emails).toContain("control@example.com");
    await owner.exec("delete from public.early_access where email = 'control@example.com'");
  });

  it("a publishable key the API refuses fails it, in one line saying where to get the right one", async () => {
    const file = summaryFile();
    const { run, stdout } = await watchInProcess(backend.url, backend.secretKey, "sb_publishable_rotated", {
      summaryFile: file,
    });
    await expect(run).rejects.toThrow(
      /^The API at .+ refused the key from PUBLIC_SUPABASE_PUBLISHABLE_KEY as invalid, as it refuses the page's sign-ups .+ publishable key \(sb_publishable_…\) .+ Project Settings → API Keys/,
    );
    await expect(run).rejects.toMatchObject({ title: "Publishable key refused" });
    // No report: the command (cli.ts) writes the failure where the owner looks.
    expect(stdout.text()).toBe("");
    expect(readFileSync(file, "utf8")).toBe("# An earlier step\n");
  });

  it("a secret key the API refuses fails it, though the page's path answers", async () => {
    const { run } = await watchInProcess(backend.url, "sb_secret_rotated", backend.publishableKey);
    await expect(run).rejects.toThrow(
      /refused the key from SUPABASE_SECRET_KEY as invalid: copy the project's secret key/,
    );
  });

  it("an insert grant taken from the page's role fails it, naming the grant to give back", async () => {
    await owner.exec("revoke insert on table public.early_access from anon");
    try {
      const { run } = await watchInProcess(backend.url, backend.secretKey, backend.publishableKey);
      await expect(run).rejects.toThrow(
        /^The key from PUBLIC_SUPABASE_PUBLISHABLE_KEY may not add a sign-up at .+ \(permission denied for table early_access\): every sign-up from the page fails\. .+grant insert \(email, phone\), select on table public\.early_access to anon, authenticated;$/,
      );
    } finally {
      await owner.exec("grant insert (email, phone) on table public.early_access to anon");
    }
  });
});

describe("against a database whose check is gone", () => {
  it.each([
    { case: "", readsAfterThePage: false },
    {
      // The order a busy machine once gave them: the list read with the page's row in it, a
      // sign-up later than the command's clock, and the only one.
      case: ", read after the page's path stored it",
      readsAfterThePage: true,
    },
  ])(
    "removes the row the page's path stored$case, and fails, saying to apply the migrations",
    async ({ readsAfterThePage }) => {
      const { database, owner } = await openTestDatabase();
      // The check, as a database without this repository's migrations would have none.
      await owner.exec(`create or replace function private.broken_check(sign_up public.early_access) returns text
        language plpgsql immutable set search_path = '' as $$ begin return null; end; $$`);
      const backend = await startLocalSupabase({ database, port: 0, log: () => {} });
      try {
        const { run } = await watchInProcess(backend.url, backend.secretKey, backend.publishableKey, {
          readsAfterThePage,
        });
        await expect(run).rejects.toThrow(
          /^The page's sign-up path at .+ stored "sign-ups watch: not an address", which the database must refuse: .+ The row was removed; apply this repository's migrations/,
        );
        const { rows } = await owner.query("select email from public.early_access");
        expect(rows).toEqual([]);
      } finally {
        await backend.close();
      }
    },
  );
});

describe("against a project that does not answer", () => {
  it.each([
    {
      case: "paused (HTTP 540): where to resume it",
      ...PAUSED,
      message:
        /^The project at http:\/\/localhost:\d+ is paused \(HTTP 540\): it answers nothing, sign-ups from the page included\. Resume it at/,
    },
    {
      // (supabase-js retries a read that meets 503 or 520 three times, over 7 s, before it fails.)
      case: "failing (HTTP 502, an HTML page): the status, the page's first words, where to look",
      status: 502,
      body: `<html>\n<head><title>502 Bad Gateway</title></head>\n${"<p>…</p>\n".repeat(200)}</html>`,
      message:
        /^The API at http:\/\/localhost:\d+ answered 502: <html> <head><title>502 Bad Gateway.{0,180}…\. The failure is on the project's side: see its logs at the Supabase dashboard, and https:\/\/status\.supabase\.com; try again later\.$/,
    },
  ])("$case", async ({ status, body, message }) => {
    const server = await answering(status, body);
    try {
      const { run } = await watchInProcess(server.url, "sb_secret_x", LOCAL_PUBLISHABLE_KEY);
      await expect(run).rejects.toThrow(message);
    } finally {
      await server.close();
    }
  });

  // supabase-js retries the reads three times (1, 2 and 4 s apart) before it gives up.
  it("an address that no longer resolves: maybe paused or deleted, and where to look", async () => {
    // What Node's fetch throws when DNS has no such name, as supabase-js then reports it.
    const unresolved: typeof fetch = async () => {
      const cause = Object.assign(new Error("getaddrinfo ENOTFOUND abcdefghijklmnopqrst.supabase.co"), {
        code: "ENOTFOUND",
      });
      throw new TypeError("fetch failed", { cause });
    };
    const url = "https://abcdefghijklmnopqrst.supabase.co";
    const options = { auth: { persistSession: false }, global: { fetch: unresolved } };
    const signUps = signUpsClient(createClient(url, "sb_secret_x", options), {
      url,
      keySource: "SUPABASE_SECRET_KEY",
    });
    const page = createClient(url, LOCAL_PUBLISHABLE_KEY, options);
    const discard = new PassThrough();
    await expect(
      watch(
        { signUps, now: NOW, zone: "UTC", stdout: discard, stderr: discard },
        {
          url,
          checkPage: () => checkSignUpPath(page, { url, keySource: "PUBLIC_SUPABASE_PUBLISHABLE_KEY" }),
        },
      ),
    ).rejects.toThrow(
      "Cannot reach the Supabase API at https://abcdefghijklmnopqrst.supabase.co (getaddrinfo ENOTFOUND " +
        "abcdefghijklmnopqrst.supabase.co). If the address is right, the project may be paused or deleted: see " +
        "https://supabase.com/dashboard/project/abcdefghijklmnopqrst.",
    );
  });
});

describe("npm run sign-ups -- watch, as the scheduled job runs it", () => {
  let backend: LocalSupabase;
  beforeAll(async () => {
    const { database, owner } = await openTestDatabase();
    await owner.exec(SEED);
    backend = await startLocalSupabase({ database, port: 0, log: () => {} });
  });
  afterAll(() => backend?.close());

  /** The job's environment: the project's URL and both keys, its summary file, nothing else. */
  function runWatch(settings: Record<string, string>) {
    const env = {
      ...withoutTestEnvironment(process.env),
      PUBLIC_SUPABASE_URL: backend.url.replace("127.0.0.1", "localhost"),
      SUPABASE_SECRET_KEY: backend.secretKey,
      PUBLIC_SUPABASE_PUBLISHABLE_KEY: backend.publishableKey,
      SUPABASE_API_PORT: "",
      SUPABASE_DATA_DIR: join(root, "untouched"),
      SUPABASE_DB_URL: "",
      SUPABASE_SEED_FILE: "",
      SIGN_UPS_NOW: NOW.toISOString(),
      TZ: "UTC",
      GITHUB_STEP_SUMMARY: "",
      ...settings,
    };
    return runNpmScript("sign-ups", ["watch"], { env });
  }

  it("prints the report and appends it to GITHUB_STEP_SUMMARY, exit status 0", async () => {
    const file = summaryFile();
    const run = await runWatch({ GITHUB_STEP_SUMMARY: file });
    expect(run, run.stderr).toMatchObject({ status: 0, stderr: "" });
    expect(run.stdout.split("\n").slice(0, SUMMARY.length)).toEqual(SUMMARY);
    expect(readFileSync(file, "utf8")).toBe(`# An earlier step\n${run.stdout}`);
  });

  it.each([
    {
      case: "without the publishable key: says what to set",
      settings: { PUBLIC_SUPABASE_PUBLISHABLE_KEY: "" },
      message:
        /^error: PUBLIC_SUPABASE_PUBLISHABLE_KEY is not set: watch checks the page's sign-up path with the page's own key\./,
    },
    {
      case: "with the secret key as the publishable one: refuses it",
      settings: { PUBLIC_SUPABASE_PUBLISHABLE_KEY: "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz" },
      message: /^error: PUBLIC_SUPABASE_PUBLISHABLE_KEY holds a secret key, which the page must never carry/,
    },
  ])("$case, in one line, exit status 1", async ({ settings, message }) => {
    const file = summaryFile();
    const run = await runWatch({ ...settings, GITHUB_STEP_SUMMARY: file });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.trimEnd().split("\n"), run.stderr).toHaveLength(1);
    expect(run.stderr).toMatch(message);
    expect(readFileSync(file, "utf8")).toMatch(
      /^# An earlier step\n## [^\n]+\n\nPUBLIC_SUPABASE_PUBLISHABLE_KEY /,
    );
  });

  it("under GitHub Actions, a paused project: an ::error:: annotation with its title, and the run's summary says it", async () => {
    const file = summaryFile();
    const run = await withPausedProject((url) =>
      runWatch({ PUBLIC_SUPABASE_URL: url, GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: file }),
    );
    expect(run).toMatchObject({ status: 1, stdout: "" });
    expect(run.stderr).toMatch(
      /^::error title=Supabase project paused::The project at http:\/\/localhost:\d+ is paused \(HTTP 540\): [^\n]+ Resume it at [^\n]+\n$/,
    );
    expect(readFileSync(file, "utf8")).toMatch(
      /^# An earlier step\n## Supabase project paused\n\nThe project at http:\/\/localhost:\d+ is paused \(HTTP 540\)[^\n]+\n$/,
    );
  });

  it("against a paused project: one line, exit status 1", async () => {
    const run = await withPausedProject((url) => runWatch({ PUBLIC_SUPABASE_URL: url }));
    expect(run).toMatchObject({ status: 1, stdout: "" });
    expect(run.stderr).toMatch(
      /^error: The project at http:\/\/localhost:\d+ is paused \(HTTP 540\)[^\n]*\n$/,
    );
  });
});
