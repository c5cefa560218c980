// The daily watch and the weekly backup (.github/workflows/watch.yml): their own steps, run with
// bash as the runner runs them, each as its `if:` says, with the secrets and variables pointing at
// a project (a local Supabase started here, standing in for the live one), at a site (a local one
// over HTTPS, with certificates made here: tests/support/https-site.ts), and at GitHub's API (a
// stand-in: tests/support/github-api.ts, as GitHub's cannot be had here), or at a paused project.
// Also a copy of the template with none, some or all of a job's settings, a repository public (the
// counts kept out of what anyone can read, unless the owner publishes them) or private, 49, 50 or
// 60 days after its last commit, and the day after "Enable workflow" with and without the commit
// the failure asks for, made by git for real.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { Decrypter, generateIdentity, identityToRecipient } from "age-encryption";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { withPausedProject } from "../support/answering.ts";
import { openTestDatabase, signUpOverHttp } from "../support/database.ts";
import { daysAgo, startGitHubApi, type GitHubApi, type Repository } from "../support/github-api.ts";
import { pageFor, startHttpsSite, type HttpsSite } from "../support/https-site.ts";
import { ownSteps, readWorkflow, REPOSITORY, runnerEnv, runSteps, type Context } from "./workflow.ts";

const workflow = readWorkflow("watch.yml");
const { watch, backup } = workflow.jobs as Required<typeof workflow.jobs>;
const watchSteps = ownSteps(watch!);
const [settingsStep, watchStep, inactivityStep] = watchSteps;
const WATCH_SETTINGS = ["PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY", "PUBLIC_SUPABASE_PUBLISHABLE_KEY"];

const WEEKLY = "43 7 * * 1";

const root = mkdtempSync(join(tmpdir(), "watch-workflow-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The runner's environment, with `extra`. */
const runner = (extra: Record<string, string> = {}) => runnerEnv(workflow, root, extra);

/** GitHub's API, for the length of a test. */
let api: GitHubApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});
/** The date (UTC) `days` days from today. */
const dateIn = (days: number) => new Date(Date.now() + days * 24 * 60 * 60 * 1000).toISOString().slice(0, 10);
async function githubApi(repository: Partial<Repository> = {}) {
  api = await startGitHubApi({ name: REPOSITORY, lastCommit: daysAgo(3), ...repository });
  return api;
}

describe("the watch's workflow", () => {
  it("watches every day, backs up on Mondays, and both on demand", () => {
    expect(workflow.on).toEqual({
      schedule: [{ cron: "17 7 * * *" }, { cron: WEEKLY }],
      workflow_dispatch: null,
    });
    expect(watch!.if).toBe(`github.event.schedule != '${WEEKLY}'`);
    expect(backup!.if).toBe(
      `github.event.schedule == '${WEEKLY}' || github.event_name == 'workflow_dispatch'`,
    );
  });

  it("checks its settings, installs without scripts, watches, then counts the days GitHub's rule leaves, even after a failure", () => {
    expect(watch!.steps.map((step) => step.uses?.split("@")[0] ?? step.run!.trim())).toEqual([
      "actions/checkout",
      "actions/setup-node",
      `node tools/github/settings.ts watch ${WATCH_SETTINGS.join(" ")}`,
      "npm ci --ignore-scripts --no-audit --no-fund",
      "npm run sign-ups -- watch",
      "node tools/github/inactivity.ts check",
    ]);
    expect(watch!.steps.slice(3).map((step) => step.if)).toEqual([
      "steps.settings.outputs.watch == 'true'",
      "steps.settings.outputs.watch == 'true'",
      "${{ !cancelled() && steps.settings.outputs.watch == 'true' }}",
    ]);
    expect(inactivityStep!.env).toEqual({ GITHUB_TOKEN: "${{ github.token }}" });
    expect(watch!.permissions).toEqual({ contents: "read" });
  });

  it("reads the publishable key from a variable or a secret, and the site from a variable", () => {
    for (const step of [settingsStep!, watchStep!])
      expect(step.env).toMatchObject({
        PUBLIC_SUPABASE_PUBLISHABLE_KEY:
          "${{ vars.PUBLIC_SUPABASE_PUBLISHABLE_KEY || secrets.PUBLIC_SUPABASE_PUBLISHABLE_KEY }}",
      });
    expect(watchStep!.env).toMatchObject({ SITE_URL: "${{ vars.SITE_URL }}" });
  });

  describe("a copy of the template", () => {
    it("with none of its settings: green, a notice naming what to set, nothing watched or asked of GitHub", async () => {
      const github = await githubApi({ lastCommit: daysAgo(55) });
      const run = await runSteps(watchSteps, { baseEnv: runner({ GITHUB_API_URL: github.url }) });
      expect(run.status, run.output).toBe(0);
      const message =
        "Set PUBLIC_SUPABASE_URL, SUPABASE_SECRET_KEY and PUBLIC_SUPABASE_PUBLISHABLE_KEY in the repository's " +
        "Settings → Secrets and variables → Actions to turn it on (README: GitHub's jobs).";
      expect(run.output).toBe(`::notice title=Watch not set up::${message}\n`);
      expect(run.summary).toBe(`## Watch not set up\n\n${message}\n`);
      expect(run.steps.settings!.outputs).toEqual({ watch: "false" });
      // Not even from day 50: an owner who set nothing gets no failure mail.
      expect(github.requests).toEqual([]);
    });

    it("with some of them: fails, naming the missing ones, and watches nothing", async () => {
      const secrets = {
        PUBLIC_SUPABASE_URL: "https://abcdefghijklmnopqrst.supabase.co",
        SUPABASE_SECRET_KEY: "sb_secret_x",
      };
      const run = await runSteps(watchSteps, { baseEnv: runner(), context: { secrets } });
      expect(run.status, run.output).toBe(1);
      const message =
        "Some of its settings are set, not PUBLIC_SUPABASE_PUBLISHABLE_KEY: set it in the repository's " +
        "Settings → Secrets and variables → Actions (README: GitHub's jobs).";
      expect(run.output).toBe(`::error title=Watch missing settings::${message}\n`);
      expect(run.summary).toBe(`## Watch missing settings\n\n${message}\n`);
      expect(run.steps.settings).toEqual({ outcome: "failure", outputs: { watch: "false" } });
    });
  });

  describe("against a project", () => {
    let backend: LocalSupabase;
    let owner: Database;
    /** Five sign-ups, one from a disposable domain, which the owner's command marks for review. */
    const SIGN_UPS = ["ada", "bob", "cy", "dee"]
      .map((name) => `${name}@example.com`)
      .concat("eve@mailinator.com");
    /** "localhost": a project elsewhere, not the local Supabase the command would otherwise start. */
    let url: string;
    beforeAll(async () => {
      let database: Database;
      ({ database, owner } = await openTestDatabase());
      backend = await startLocalSupabase({ database, port: 0, log: () => {} });
      url = backend.url.replace("127.0.0.1", "localhost");
      for (const email of SIGN_UPS) expect((await signUpOverHttp(backend, email)).status).toBe(201);
    });
    afterAll(() => backend?.close());

    const sites: HttpsSite[] = [];
    afterAll(() => Promise.all(sites.map((site) => site.close())));
    async function site(days: number, projectUrl = url) {
      const started = await startHttpsSite({ days, page: pageFor(projectUrl) });
      sites.push(started);
      return started;
    }

    /**
     * The repository's settings as the README tells the owner to set them; the publishable key as a
     * secret. A private repository unless told: its runs show the counts.
     */
    const settings = (projectUrl: string, vars: Record<string, string> = {}, isPrivate = true): Context => ({
      secrets: {
        PUBLIC_SUPABASE_URL: projectUrl,
        SUPABASE_SECRET_KEY: backend.secretKey,
        PUBLIC_SUPABASE_PUBLISHABLE_KEY: backend.publishableKey,
      },
      vars,
      github: { token: "ghs_job_token", event: { repository: { private: isPrivate } } },
    });

    const stored = async () =>
      (await owner.query<{ n: number }>("select count(*)::integer as n from public.early_access")).rows[0]!.n;

    it("passes, stores nothing, sums the list up, looks at the site, and says when GitHub would stop the schedules", async () => {
      const { url: siteUrl, certFile } = await site(90);
      const github = await githubApi();
      const run = await runSteps(watchSteps, {
        baseEnv: runner({ NODE_EXTRA_CA_CERTS: certFile, GITHUB_API_URL: github.url }),
        context: settings(url, { SITE_URL: siteUrl }),
      });
      expect(run.status, run.output).toBe(0);
      expect(run.output).not.toMatch(/^::(error|warning)/m);
      expect(await stored()).toBe(SIGN_UPS.length);
      const lines = run.summary.split("\n");
      expect(lines).toContain("- **5** in all");
      expect(lines.find((line) => line.startsWith("- **1** marked for review"))).toMatch(
        /1 at a disposable domain/,
      );
      expect(run.summary).toMatch(
        new RegExp(
          `The site answers: ${siteUrl} \\(HTTP 200\\), sending sign-ups to this project; its certificate ends on \\d{4}-\\d\\d-\\d\\d, in (89|90) days\\.`,
        ),
      );
      // Read-only, with the job's token.
      expect(github.requests).toEqual([
        { method: "GET", path: `/repos/${REPOSITORY}`, token: "ghs_job_token" },
        { method: "GET", path: `/repos/${REPOSITORY}/commits/main`, token: "ghs_job_token" },
      ]);
      expect(run.summary).toContain(
        `GitHub stops this repository's schedules after 60 days without activity: on ${dateIn(57)} (in 57 days), unless a commit comes to main before.`,
      );
    });

    it.each([
      ["a public repository", false, {}, false],
      ["a public repository whose owner sets PUBLISH_COUNTS", true, { PUBLISH_COUNTS: "true" }, false],
      ["a private repository", true, {}, true],
    ])(
      "%s: the summary says the project and the site are well; the counts shown: %s",
      async (_, shown, vars, isPrivate) => {
        const { url: siteUrl, certFile } = await site(90);
        const github = await githubApi({ private: isPrivate });
        const run = await runSteps(watchSteps, {
          baseEnv: runner({ NODE_EXTRA_CA_CERTS: certFile, GITHUB_API_URL: github.url }),
          context: settings(url, { SITE_URL: siteUrl, ...vars }, isPrivate),
        });
        expect(run.status, run.output).toBe(0);
        expect(run.summary).toMatch(/^The project answers: the list was read with the secret key/m);
        expect(run.summary).toContain(`The site answers: ${siteUrl} (HTTP 200)`);
        const counts = ["- **5** in all", "marked for review", "### Sign-ups per day"];
        const private_ =
          "The counts stay private: anyone can read this public repository's runs. See them with " +
          "`npm run sign-ups -- count`, or in the weekly encrypted backup; set the repository variable " +
          "`PUBLISH_COUNTS` to `true` to show them here (README: GitHub's jobs).";
        for (const words of counts) expect(run.summary.includes(words), words).toBe(shown);
        expect(run.summary.includes(private_)).toBe(!shown);
        // Nor in the log, which is as public as the summary.
        if (!shown) expect(run.output).not.toMatch(/in all|marked for review/);
      },
    );

    it("without SITE_URL: the summary says the site is not watched", async () => {
      const github = await githubApi();
      const run = await runSteps(watchSteps, {
        baseEnv: runner({ GITHUB_API_URL: github.url }),
        context: settings(url),
      });
      expect(run.status, run.output).toBe(0);
      expect(run.summary).toContain(
        "The site is not watched: set the repository variable `SITE_URL` to its address (README: GitHub's jobs).",
      );
    });

    it("a certificate near its end: passes, with a warning annotation and the summary saying so", async () => {
      const { url: siteUrl, certFile } = await site(5);
      const github = await githubApi();
      const run = await runSteps(watchSteps, {
        baseEnv: runner({ NODE_EXTRA_CA_CERTS: certFile, GITHUB_API_URL: github.url }),
        context: settings(url, { SITE_URL: siteUrl }),
      });
      expect(run.status, run.output).toBe(0);
      expect(run.output).toMatch(
        /^::warning title=Site certificate ends soon::The site's certificate at https:\/\/localhost:\d+ ends on /m,
      );
      expect(run.summary).toMatch(/\*\*Warning\*\*: The site's certificate at .+ ends on .+, in [45] days/);
    });

    it.each([
      {
        case: "an expired certificate",
        days: -1,
        other: false,
        title: "Site certificate expired",
        words: /expired on/,
      },
      {
        case: "a page built for another project",
        days: 90,
        other: true,
        title: "Site on another project",
        words: /does not send sign-ups to/,
      },
    ])(
      "$case: the list is still summed up, then the run fails with an annotation and the summary saying why",
      async ({ days, other, title, words }) => {
        const { url: siteUrl, certFile } = await site(
          days,
          other ? "https://zyxwvutsrqponmlk.supabase.co" : url,
        );
        const github = await githubApi();
        const run = await runSteps(watchSteps, {
          baseEnv: runner({ NODE_EXTRA_CA_CERTS: certFile, GITHUB_API_URL: github.url }),
          context: settings(url, { SITE_URL: siteUrl }),
        });
        expect(run.status, run.output).toBe(1);
        expect(run.output).toMatch(new RegExp(`^::error title=${title}::`, "m"));
        expect(run.summary).toContain("- **5** in all");
        expect(run.summary).toMatch(new RegExp(`\\n## ${title}\\n\\n`));
        expect(run.summary.split(`## ${title}`)[1]).toMatch(words);
        // The days were counted all the same.
        expect(github.requests).toHaveLength(2);
      },
    );

    it("a paused project: fails with an annotation naming it paused, and still counts the days", async () => {
      const github = await githubApi();
      const run = await withPausedProject((paused) =>
        runSteps(watchSteps, { baseEnv: runner({ GITHUB_API_URL: github.url }), context: settings(paused) }),
      );
      expect(run.status, run.output).toBe(1);
      expect(run.output).toMatch(
        /^::error title=Supabase project paused::The project at http:\/\/localhost:\d+ is paused \(HTTP 540\)/m,
      );
      expect(run.summary).toMatch(/^## Supabase project paused\n\nThe project at .+ is paused/m);
      expect(run.summary).toMatch(/GitHub stops this repository's schedules .+ \(in 57 days\)/);
    });
  });

  describe("GitHub's 60-day rule", () => {
    /** The days' step, after the settings' (set, as their values are not read here). */
    const count = (repository: Partial<Repository>) =>
      githubApi(repository).then((github) =>
        runSteps([settingsStep!, inactivityStep!], {
          baseEnv: runner({ GITHUB_API_URL: github.url }),
          context: {
            secrets: Object.fromEntries(WATCH_SETTINGS.map((name) => [name, "set"])),
            github: { token: "ghs_job_token" },
          },
        }),
      );

    it("a public repository on day 49 without a commit: green, the date in the summary", async () => {
      const run = await count({ lastCommit: daysAgo(49) });
      expect(run.status, run.output).toBe(0);
      expect(run.output).not.toMatch(/::error/);
      expect(run.summary).toBe(
        `\nGitHub stops this repository's schedules after 60 days without activity: on ${dateIn(11)} (in 11 days), unless a commit comes to main before.\n`,
      );
    });

    it.each([
      { days: 50, when: "in 10 days", stops: 10 },
      { days: 60, when: "today", stops: 0 },
    ])(
      "a public repository on day $days: fails, naming the date and the one thing to do",
      async ({ days, when, stops }) => {
        const run = await count({ lastCommit: daysAgo(days) });
        expect(run.status, run.output).toBe(1);
        const title = `Schedules stop on ${dateIn(stops)}`;
        const message =
          `No commit on main for ${days} days: GitHub stops a public repository's schedules after 60 days without ` +
          `activity, this one's on ${dateIn(stops)} (${when}). Push any commit to main, an empty one will do ` +
          '(`git commit --allow-empty -m "Keep the schedules running" && git push`). Once stopped, also enable the ' +
          "workflow again under Actions → Watch the project → Enable workflow: enabling alone leaves this check " +
          "failing, as it counts from the last commit.";
        expect(run.output).toContain(`::error title=${title}::${message}\n`);
        expect(run.summary).toContain(`## ${title}\n\n${message}\n`);
      },
    );

    it("a private repository: no such rule, green however old the last commit", async () => {
      const run = await count({ lastCommit: daysAgo(200), private: true });
      expect(run.status, run.output).toBe(0);
      expect(run.output).not.toMatch(/::error/);
      expect(run.summary).toBe(
        "\nA private repository: GitHub does not stop its schedules for inactivity (the last commit on main is 200 days old).\n",
      );
    });

    describe("the day after Enable workflow", () => {
      /** A clone whose last commit on main is `days` old, as git makes it. */
      function clone(days: number) {
        const folder = mkdtempSync(join(root, "clone-"));
        const date = daysAgo(days).toISOString();
        const git = (...args: string[]) =>
          execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
            cwd: folder,
            env: { ...process.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
          });
        git("init", "--quiet", "--initial-branch=main");
        git("commit", "--quiet", "--allow-empty", "-m", "the last commit");
        return folder;
      }
      /** The last commit's date, as GitHub's API gives it for main. */
      const lastCommit = (folder: string) =>
        new Date(
          execFileSync("git", ["log", "-1", "--format=%cI"], { cwd: folder, encoding: "utf8" }).trim(),
        );
      const check = (folder: string) => count({ lastCommit: lastCommit(folder) });

      it("enabled alone (no commit since day 61): the run fails again, and its message gives the command that makes it green", async () => {
        const folder = clone(61);
        const run = await check(folder);
        expect(run.status, run.output).toBe(1);
        expect(run.output).toContain("enabling alone leaves this check failing");
      });

      it("with the commit the failure gives, made as it says (pushed, GitHub's API shows it): the next run is green", async () => {
        const folder = clone(61);
        const failed = await check(folder);
        await api!.close();
        // The failure's own command, less the push (the stand-in reads the clone's last commit instead).
        const command = /`(git commit --allow-empty[^`]*?) && git push`/.exec(failed.output)![1]!;
        execFileSync("bash", ["-c", command], {
          cwd: folder,
          env: {
            ...process.env,
            GIT_AUTHOR_NAME: "t",
            GIT_AUTHOR_EMAIL: "t@example.com",
            GIT_COMMITTER_NAME: "t",
            GIT_COMMITTER_EMAIL: "t@example.com",
          },
        });
        const run = await check(folder);
        expect(run.status, run.output).toBe(0);
        expect(run.output).not.toMatch(/::error/);
        expect(run.summary).toContain(`on ${dateIn(60)} (in 60 days)`);
      });
    });
  });

  describe("the weekly backup", () => {
    const backupSteps = ownSteps(backup!);
    const digest = backupSteps.at(-1);
    const upload = backup!.steps.find((step) => step.uses?.startsWith("actions/upload-artifact@"));

    /** A project of its own, holding these sign-ups, and the settings that point at it. */
    async function project(emails: string[]) {
      const { database, owner } = await openTestDatabase();
      for (const email of emails)
        await owner.query("insert into public.early_access (email) values ($1)", [email]);
      const backend = await startLocalSupabase({ database, port: 0, log: () => {} });
      return {
        secrets: {
          PUBLIC_SUPABASE_URL: backend.url.replace("127.0.0.1", "localhost"),
          SUPABASE_SECRET_KEY: backend.secretKey,
          PUBLIC_SUPABASE_PUBLISHABLE_KEY: backend.publishableKey,
        },
        close: () => backend.close(),
      };
    }

    /** A stand-in for `gh` on PATH: it keeps its arguments and what it reads. */
    function fakeGh() {
      const bin = mkdtempSync(join(root, "bin-"));
      const gh = join(bin, "gh");
      writeFileSync(gh, `#!/bin/bash\nprintf '%s\\n' "$*" > "${bin}/args"\ncat > "${bin}/body"\n`, {
        mode: 0o755,
      });
      return {
        PATH: `${bin}:${process.env.PATH}`,
        args: () => readFileSync(join(bin, "args"), "utf8"),
        body: () => readFileSync(join(bin, "body"), "utf8"),
      };
    }

    const NOTICE = (job: string, name: string) =>
      `::notice title=${job[0]!.toUpperCase()}${job.slice(1)} not set up::Set ${name} in the repository's ` +
      `Settings → Secrets and variables → Actions to turn it on (README: GitHub's jobs).\n`;

    it("keeps the encrypted file as an artifact for 90 days, only when there is one", () => {
      expect(upload).toMatchObject({
        if: "steps.backup.outputs.file != ''",
        with: {
          path: "${{ steps.backup.outputs.file }}",
          "retention-days": 90,
          "if-no-files-found": "error",
        },
      });
    });

    it("posts the digest even after a failed backup, with the job's token, contents: read and issues: write", () => {
      expect(digest).toMatchObject({
        if: "${{ !cancelled() && steps.settings.outputs.digest == 'true' }}",
        env: { GITHUB_TOKEN: "${{ github.token }}" },
      });
      expect(backup!.permissions).toEqual({ contents: "read", issues: "write" });
    });

    it("a copy with none of its settings: green, a notice for each of the two, nothing backed up or posted", async () => {
      const gh = fakeGh();
      const run = await runSteps(backupSteps, { baseEnv: runner({ PATH: gh.PATH }) });
      expect(run.status, run.output).toBe(0);
      expect(run.output).toBe(NOTICE("backup", "BACKUP_PUBLIC_KEY") + NOTICE("digest", "DIGEST_ISSUE"));
      expect(run.steps.backup!.outcome).toBe("skipped");
      expect(run.steps).not.toHaveProperty("digest");
      expect(() => gh.args()).toThrow(/ENOENT/);
    });

    it("a key without the project's settings: fails naming them", async () => {
      const run = await runSteps(backupSteps, {
        baseEnv: runner(),
        context: { vars: { BACKUP_PUBLIC_KEY: "age1x" }, secrets: { SUPABASE_SECRET_KEY: "sb_secret_x" } },
      });
      expect(run.status, run.output).toBe(1);
      expect(run.output).toContain(
        "::error title=Backup missing settings::Some of its settings are set, not PUBLIC_SUPABASE_URL: " +
          "set it in the repository's Settings → Secrets and variables → Actions (README: GitHub's jobs).\n",
      );
      expect(run.steps.backup!.outcome).toBe("skipped");
    });

    it("with a key: an age file that the owner's identity decrypts into the list, and no clear copy", async () => {
      const { secrets, close } = await project(["ada@example.com", "bob@example.com"]);
      const runnerTemp = mkdtempSync(join(root, "runner-temp-"));
      try {
        const identity = await generateIdentity();
        const run = await runSteps(backupSteps, {
          baseEnv: runner(),
          runnerTemp,
          context: { secrets, vars: { BACKUP_PUBLIC_KEY: await identityToRecipient(identity) } },
        });
        expect(run.status, run.output).toBe(0);
        const file = run.steps.backup!.outputs.file;
        expect(file, run.outputs).toMatch(
          new RegExp(`^${runnerTemp}/sign-ups-\\d{4}-\\d\\d-\\d\\d\\.csv\\.age$`),
        );
        const decrypter = new Decrypter();
        decrypter.addIdentity(identity);
        const list = await decrypter.decrypt(readFileSync(file!), "text");
        expect(
          list
            .split("\r\n")
            .slice(1, 3)
            .map((line) => line.split(",")[0])
            .sort(),
        ).toEqual(['"ada@example.com"', '"bob@example.com"']);
        // Beside it, only the runner's own files (the steps' scripts, the summary, the outputs).
        const others = readdirSync(runnerTemp).filter(
          (name) => !/^(step-\d+\.sh|summary\.md|output-\d+|env)$/.test(name),
        );
        expect(others).toEqual([basename(file!)]);
        expect(run.summary).toMatch(
          /^Backed up the list, encrypted to age1.{8}…, as the artifact sign-ups-backup: kept 90 days\.$/m,
        );
      } finally {
        await close();
      }
    });

    it.each([
      ["a private repository: the counts", true, true],
      ["a public repository: whether all is well, and where the counts are", false, false],
    ])(
      "with DIGEST_ISSUE, %s, and the days GitHub's rule leaves, as a comment on that issue, never an address",
      async (_, isPrivate, shown) => {
        const { secrets, close } = await project([
          "ada@example.com",
          "bob@example.com",
          "eve@mailinator.com",
        ]);
        const github = await githubApi({ lastCommit: daysAgo(20), private: isPrivate });
        const gh = fakeGh();
        try {
          const run = await runSteps(backupSteps, {
            baseEnv: runner({ PATH: gh.PATH, GITHUB_API_URL: github.url }),
            context: {
              secrets,
              vars: { DIGEST_ISSUE: "12" },
              github: { token: "ghs_job_token", event: { repository: { private: isPrivate } } },
            },
          });
          expect(run.status, run.output).toBe(0);
          expect(run.output).toBe(NOTICE("backup", "BACKUP_PUBLIC_KEY"));
          expect(gh.args()).toBe(`issue comment 12 --repo ${REPOSITORY} --body-file -\n`);
          const body = gh.body();
          expect(body).toMatch(/^## Sign-ups, \d{4}-\d\d-\d\d \(UTC\)\n\n/);
          expect(body).toMatch(/^The project answers: the list was read with the secret key/m);
          expect(body.includes("- **3** in all")).toBe(shown);
          expect(body.includes("- **1** marked for review: 1 at a disposable domain")).toBe(shown);
          expect(body.includes("The counts stay private")).toBe(!shown);
          expect(body).toMatch(
            new RegExp(
              isPrivate
                ? "\\n\\nA private repository: GitHub does not stop its schedules for inactivity \\(the last commit on main is 20 days old\\)\\.\\n$"
                : `\\n\\nGitHub stops this repository's schedules after 60 days without activity: on ${dateIn(40)} \\(in 40 days\\), unless a commit comes to main before\\.\\n$`,
            ),
          );
          expect(body).not.toMatch(/@/);
        } finally {
          await close();
        }
      },
    );
  });
});
