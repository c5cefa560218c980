// The daily watch and the weekly backup (.github/workflows/watch.yml): their own steps after the
// install, run with bash as the runner runs them, with the secrets and variables pointing at a
// project (a local Supabase started here, standing in for the live one), at a site (a local one
// over HTTPS, with certificates made here: tests/support/https-site.ts), and at GitHub's API (a
// stand-in: tests/support/github-api.ts), or at a paused project.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { Decrypter, generateIdentity, identityToRecipient } from "age-encryption";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { withoutTestEnvironment } from "../test-environment.ts";
import { withPausedProject } from "../support/answering.ts";
import { openTestDatabase, signUpOverHttp } from "../support/database.ts";
import { daysAgo, startGitHubApi, type GitHubApi, type Repository } from "../support/github-api.ts";
import { pageFor, startHttpsSite, type HttpsSite } from "../support/https-site.ts";
import { readWorkflow, runSteps, stepsAfter, type Context } from "./workflow.ts";

const workflow = readWorkflow("watch.yml");
const { watch, backup } = workflow.jobs as Required<typeof workflow.jobs>;
const watchSteps = stepsAfter(watch!, "install");
const [watchStep, keepaliveStep] = watchSteps;

const WEEKLY = "43 7 * * 1";
const REPOSITORY = "owner/future-awaits";

const root = mkdtempSync(join(tmpdir(), "watch-workflow-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * The runner's environment: none of the project's settings but those the workflow's steps set, so
 * that a developer's .env counts for nothing (empty is unset, and wins over .env), and what a runner
 * sets for GitHub's API.
 */
const runner = (extra: Record<string, string> = {}) => ({
  ...withoutTestEnvironment(process.env),
  PUBLIC_SUPABASE_URL: "",
  PUBLIC_SUPABASE_PUBLISHABLE_KEY: "",
  SUPABASE_SECRET_KEY: "",
  SITE_URL: "",
  BACKUP_PUBLIC_KEY: "",
  SUPABASE_API_PORT: "",
  SUPABASE_DATA_DIR: join(root, "untouched"),
  SUPABASE_DB_URL: "",
  SUPABASE_SEED_FILE: "",
  SIGN_UPS_NOW: "",
  TZ: "UTC",
  GITHUB_REPOSITORY: REPOSITORY,
  GITHUB_WORKFLOW_REF: `${REPOSITORY}/.github/workflows/watch.yml@refs/heads/main`,
  ...extra,
});

/** GitHub's API, for the length of a test. */
let api: GitHubApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});
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

  it("runs the owner's command, then keeps itself enabled, even after a failure, with the job's token and actions: write", () => {
    expect(watchSteps.map((step) => step.run?.trim().split("\n").at(-1))).toEqual([
      "npm run sign-ups -- watch",
      "npm run --silent keepalive",
    ]);
    expect(keepaliveStep!.if).toBe("${{ !cancelled() }}");
    expect(keepaliveStep!.env).toEqual({ GITHUB_TOKEN: "${{ github.token }}" });
    expect(watch!.permissions).toEqual({ contents: "read", actions: "write" });
  });

  it("reads the publishable key from a variable or a secret, and the site from a variable", () => {
    expect(watchStep!.env).toMatchObject({
      PUBLIC_SUPABASE_PUBLISHABLE_KEY:
        "${{ vars.PUBLIC_SUPABASE_PUBLISHABLE_KEY || secrets.PUBLIC_SUPABASE_PUBLISHABLE_KEY }}",
      SITE_URL: "${{ vars.SITE_URL }}",
    });
  });

  it.each([
    { case: "none set", set: [] as string[] },
    { case: "the publishable key missing", set: ["PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY"] },
  ])(
    "without its settings ($case): fails with an annotation naming what to set, and watches nothing",
    async ({ set }) => {
      const secrets = Object.fromEntries(set.map((name) => [name, "set"]));
      const run = await runSteps([watchStep!], { baseEnv: runner(), context: { secrets } });
      expect(run.status, run.output).toBe(1);
      const missing = [
        "PUBLIC_SUPABASE_URL",
        "SUPABASE_SECRET_KEY",
        "PUBLIC_SUPABASE_PUBLISHABLE_KEY",
      ].filter((name) => !set.includes(name));
      const message = `Set ${missing.join(" ")} in the repository's Settings → Secrets and variables → Actions (README: GitHub's jobs).`;
      expect(run.output).toBe(`::error title=Watch not set up::${message}\n`);
      expect(run.summary).toBe(`## Watch not set up\n\n${message}\n`);
    },
  );

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

    /** The repository's settings as the README tells the owner to set them; the publishable key as a secret. */
    const settings = (projectUrl: string, vars: Record<string, string> = {}): Context => ({
      secrets: {
        PUBLIC_SUPABASE_URL: projectUrl,
        SUPABASE_SECRET_KEY: backend.secretKey,
        PUBLIC_SUPABASE_PUBLISHABLE_KEY: backend.publishableKey,
      },
      vars,
      github: { token: "ghs_job_token" },
    });

    const stored = async () =>
      (await owner.query<{ n: number }>("select count(*)::integer as n from public.early_access")).rows[0]!.n;

    it("passes, stores nothing, sums the list up, looks at the site, and keeps itself enabled", async () => {
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
      expect(github.requests).toContainEqual({
        method: "PUT",
        path: `/repos/${REPOSITORY}/actions/workflows/watch.yml/enable`,
        token: "ghs_job_token",
      });
      expect(run.summary).toMatch(
        /Kept watch\.yml enabled through GitHub's API; the last commit on main is 3 days old/,
      );
    });

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
        // The keepalive ran all the same.
        expect(github.requests.map(({ method }) => method)).toContain("PUT");
      },
    );

    it("a paused project: fails with an annotation naming it paused, and still keeps itself enabled", async () => {
      const github = await githubApi();
      const run = await withPausedProject((paused) =>
        runSteps(watchSteps, { baseEnv: runner({ GITHUB_API_URL: github.url }), context: settings(paused) }),
      );
      expect(run.status, run.output).toBe(1);
      expect(run.output).toMatch(
        /^::error title=Supabase project paused::The project at http:\/\/localhost:\d+ is paused \(HTTP 540\)/m,
      );
      expect(run.summary).toMatch(/^## Supabase project paused\n\nThe project at .+ is paused/m);
      expect(github.requests.filter(({ method }) => method === "PUT")).toHaveLength(1);
    });
  });

  describe("keeping itself enabled", () => {
    const keep = (github: GitHubApi) =>
      runSteps([keepaliveStep!], {
        baseEnv: runner({ GITHUB_API_URL: github.url }),
        context: { github: { token: "ghs_job_token" } },
      });

    it("from day 50 without a commit: a warning annotation, and the summary says so", async () => {
      const run = await keep(await githubApi({ lastCommit: daysAgo(55) }));
      expect(run.status, run.output).toBe(0);
      expect(run.output).toMatch(
        /^::warning title=No commit for 55 days::No commit on main for 55 days: GitHub disables/m,
      );
      expect(run.summary).toMatch(/\*\*Warning\*\*: No commit on main for 55 days/);
    });

    it("before day 50: no warning", async () => {
      const run = await keep(await githubApi({ lastCommit: daysAgo(49) }));
      expect(run.status, run.output).toBe(0);
      expect(run.output).not.toMatch(/::warning/);
      expect(run.summary).toMatch(/Kept watch\.yml enabled .+ 49 days old/);
    });

    it("in a private repository: no 60-day rule, and no warning however old the last commit", async () => {
      const run = await keep(await githubApi({ lastCommit: daysAgo(200), private: true }));
      expect(run.status, run.output).toBe(0);
      expect(run.output).not.toMatch(/::warning/);
      expect(run.summary).toMatch(/a private repository has no 60-day rule/);
    });

    it("a token without actions: write: fails with an annotation saying what the job needs", async () => {
      const run = await keep(await githubApi({ enableStatus: 403 }));
      expect(run.status).toBe(1);
      expect(run.output).toMatch(
        /^::error title=Keepalive failed::GitHub's API answered PUT \/actions\/workflows\/watch\.yml\/enable with 403 \(Resource not accessible by integration\): the job needs `permissions: actions: write`/m,
      );
    });
  });

  describe("the weekly backup", () => {
    const backupSteps = stepsAfter(backup!, "install");
    const [backupStep, upload, digest] = backupSteps;

    it("keeps the encrypted file as an artifact for 90 days, only when there is one", () => {
      expect(upload).toMatchObject({
        if: "steps.backup.outputs.file != ''",
        uses: expect.stringMatching(/^actions\/upload-artifact@/),
        with: {
          path: "${{ steps.backup.outputs.file }}",
          "retention-days": 90,
          "if-no-files-found": "error",
        },
      });
    });

    it("without a key: no backup, green, and the summary says how to set one", async () => {
      const run = await runSteps([backupStep!], {
        baseEnv: runner(),
        context: { secrets: { PUBLIC_SUPABASE_URL: "x" } },
      });
      expect(run.status, run.output).toBe(0);
      expect(run.outputs).toBe("");
      expect(run.summary).toBe(
        "No backup: set the repository variable BACKUP_PUBLIC_KEY to your age public key (age1…; README: GitHub's jobs).\n",
      );
    });

    it("with a key: an age file that the owner's identity decrypts into the list, and no clear copy", async () => {
      const { database, owner } = await openTestDatabase();
      await owner.exec(
        "insert into public.early_access (email) values ('ada@example.com'), ('bob@example.com')",
      );
      const backend = await startLocalSupabase({ database, port: 0, log: () => {} });
      const runnerTemp = mkdtempSync(join(root, "runner-temp-"));
      try {
        const identity = await generateIdentity();
        const run = await runSteps([backupStep!], {
          baseEnv: runner(),
          runnerTemp,
          context: {
            secrets: {
              PUBLIC_SUPABASE_URL: backend.url.replace("127.0.0.1", "localhost"),
              SUPABASE_SECRET_KEY: backend.secretKey,
            },
            vars: { BACKUP_PUBLIC_KEY: await identityToRecipient(identity) },
          },
        });
        expect(run.status, run.output).toBe(0);
        const file = /^file=(.+\.csv\.age)$/m.exec(run.outputs)?.[1];
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
        await backend.close();
      }
    });

    describe("the digest", () => {
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

      it("runs even after a failed backup, with the job's token and issues: write", () => {
        expect(digest).toMatchObject({ if: "${{ !cancelled() }}", env: { GH_TOKEN: "${{ github.token }}" } });
        expect(backup!.permissions).toEqual({ contents: "read", issues: "write" });
      });

      it("without DIGEST_ISSUE: posts nothing", async () => {
        const gh = fakeGh();
        const run = await runSteps([digest!], { baseEnv: runner({ PATH: gh.PATH }) });
        expect(run).toMatchObject({ status: 0, output: "" });
        expect(() => gh.args()).toThrow(/ENOENT/);
      });

      it("with DIGEST_ISSUE: the week's counts as a comment on that issue, and never an address", async () => {
        const { database, owner } = await openTestDatabase();
        await owner.exec(
          "insert into public.early_access (email) values ('ada@example.com'), ('bob@example.com'), ('eve@mailinator.com')",
        );
        const backend = await startLocalSupabase({ database, port: 0, log: () => {} });
        const gh = fakeGh();
        try {
          const run = await runSteps([digest!], {
            baseEnv: runner({ PATH: gh.PATH }),
            context: {
              secrets: {
                PUBLIC_SUPABASE_URL: backend.url.replace("127.0.0.1", "localhost"),
                SUPABASE_SECRET_KEY: backend.secretKey,
              },
              vars: { DIGEST_ISSUE: "12" },
              github: { token: "ghs_job_token" },
            },
          });
          expect(run.status, run.output).toBe(0);
          expect(gh.args()).toBe(`issue comment 12 --repo ${REPOSITORY} --body-file -\n`);
          const body = gh.body();
          expect(body).toMatch(
            /^Sign-ups, the week to \d{4}-\d\d-\d\d \(counts only\):\n\n```text\n3 sign-ups\n/,
          );
          expect(body).toMatch(/^1 marked for review: 1 at a disposable domain$/m);
          expect(body).not.toMatch(/@/);
        } finally {
          await backend.close();
        }
      });
    });
  });
});
