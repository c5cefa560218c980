// The migrations' workflow (.github/workflows/migrations.yml): after the tests pass on the default
// branch, or on demand from it, a gate reads the `production` environment's rules (a reviewer, or
// the owner's ALLOW_UNREVIEWED_PUSH), then it asks the project which migrations it lacks and pushes
// them all, in the `production` environment, an encrypted backup of the list first, in a job of its
// own. Its steps run here with bash as the runner runs them, in a checkout of their own whose last
// commits each add a migration and the last one changes none, against a database set up as a
// hosted project is, with every migration of this repository recorded (a copy of the tests'
// template, standing in for the live project), through the pinned CLI (`npm run supabase`,
// tools/supabase-cli.ts) for real, and against a stand-in for GitHub's API
// (tests/support/github-api.ts: GitHub's own cannot be had here). Also: an environment with and
// without a reviewer, the unreviewed-push variable, a copy without its settings, with some, a
// dispatch from another branch, and a project the CLI cannot reach, whose password the run masks.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { Decrypter, generateIdentity, identityToRecipient } from "age-encryption";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { DEPLOY_COMMAND, SUPABASE_CLI } from "../../tools/supabase-cli.ts";
import { openTestDatabase, testServerUrl } from "../support/database.ts";
import { daysAgo, startGitHubApi, type Environment } from "../support/github-api.ts";
import { evaluate } from "./expressions.ts";
import {
  ownSteps,
  readWorkflow,
  REPOSITORY,
  ROOT,
  runnerEnv,
  runSteps,
  type Context,
  type Step,
} from "./workflow.ts";

const workflow = readWorkflow("migrations.yml");
const { gate, pending, backup, push } = workflow.jobs as Required<typeof workflow.jobs>;
const PUSH_SETTINGS = ["PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY", "BACKUP_PUBLIC_KEY"];

const root = mkdtempSync(join(tmpdir(), "migrations-workflow-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `yyyymmddhhmmss`, the CLI's migration version, `seconds` after `version`. */
function after(version: string, seconds: number): string {
  const [, y, mo, d, h, mi, s] = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)$/.exec(version)!;
  const instant = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!) + seconds * 1000;
  return new Date(instant).toISOString().replace(/\D/g, "").slice(0, 14);
}

/**
 * A checkout: this repository's supabase/ as committed, then two commits that each add a
 * migration, then one that changes only the README (so the tested commit changes no migration).
 * The rest of the repository (its tools, its installed packages) is linked in, as the steps run
 * the project's own commands.
 */
function checkout() {
  const folder = mkdtempSync(join(root, "checkout-"));
  for (const entry of readdirSync(ROOT))
    if (!entry.startsWith(".") && !["supabase", "README.md"].includes(entry))
      symlinkSync(join(ROOT, entry), join(folder, entry));
  cpSync(join(ROOT, "supabase"), join(folder, "supabase"), {
    recursive: true,
    filter: (source) => !source.includes("/.temp"),
  });
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: folder });
  const commit = (message: string) => git("commit", "--quiet", "-m", message);
  writeFileSync(join(folder, "README.md"), "x\n");
  git("init", "--quiet", "--initial-branch=main");
  git("add", "supabase", "README.md");
  commit("the project as it is");
  const newest = readdirSync(join(folder, "supabase/migrations")).sort().at(-1)!.slice(0, 14);
  const added = [
    { file: `${after(newest, 1)}_first_table.sql`, sql: "create table public.first_table (id integer);\n" },
    { file: `${after(newest, 2)}_second_table.sql`, sql: "create table public.second_table (id integer);\n" },
  ];
  for (const { file, sql } of added) {
    writeFileSync(join(folder, "supabase/migrations", file), sql);
    git("add", "supabase");
    commit(file);
  }
  writeFileSync(join(folder, "README.md"), "y\n");
  git("add", "README.md");
  commit("words");
  return { folder, added: added.map(({ file }) => file) };
}

/** What GitHub's events give the expressions: a push's tests passed, a dispatch, a pull request. */
const EVENTS = {
  tested: {
    event_name: "workflow_run",
    ref_name: "main",
    event: {
      repository: { default_branch: "main" },
      workflow_run: { conclusion: "success", event: "push", head_repository: { full_name: REPOSITORY } },
    },
    repository: REPOSITORY,
  },
  dispatched: (branch: string) => ({
    event_name: "workflow_dispatch",
    ref_name: branch,
    event: { repository: { default_branch: "main" } },
    repository: REPOSITORY,
  }),
};

describe("the migrations' workflow", () => {
  it("runs after the tests on main, and on demand; never on a pull request, which gets no password", () => {
    expect(workflow.on).toEqual({
      workflow_run: { workflows: ["Tests"], types: ["completed"], branches: ["main"] },
      workflow_dispatch: null,
    });
  });

  it.each([
    ["the tests passed on a push", EVENTS.tested, true],
    [
      "the tests failed",
      { ...EVENTS.tested, event: { workflow_run: { conclusion: "failure", event: "push" } } },
      false,
    ],
    [
      "the tests of a fork's pull request",
      {
        ...EVENTS.tested,
        event: {
          workflow_run: {
            conclusion: "success",
            event: "pull_request",
            head_repository: { full_name: "x/y" },
          },
        },
      },
      false,
    ],
    ["a dispatch", EVENTS.dispatched("main"), true],
  ])("opens the gate after %s: %s", (_, github, asks) => {
    expect(Boolean(evaluate(gate!.if!, { github }))).toBe(asks);
  });

  it("gate, dry run in production-dry-run, backup, then the push in production, each on the tested commit, only what the project lacks", () => {
    expect(pending).toMatchObject({ needs: "gate", environment: "production-dry-run" });
    expect(backup).toMatchObject({ needs: "pending" });
    expect(backup!.environment).toBeUndefined();
    expect(push).toMatchObject({ needs: ["gate", "pending", "backup"], environment: "production" });
    for (const job of [gate!, pending!, backup!, push!])
      expect(job.steps[0]).toMatchObject({
        uses: expect.stringMatching(/^actions\/checkout@/),
        with: {
          ref: "${{ github.event.workflow_run.head_sha || github.sha }}",
          "persist-credentials": false,
        },
      });
    const asks = (push: string) =>
      Boolean(evaluate(pending!.if!, { needs: { gate: { outputs: { push } } } }));
    expect([asks("reviewed"), asks("unreviewed"), asks("")]).toEqual([true, true, false]);
    for (const job of [backup!, push!]) {
      const runs = (migrations: string) =>
        Boolean(evaluate(job.if!, { needs: { pending: { outputs: { migrations } } } }));
      expect([runs("20270101000000_a.sql"), runs("")]).toEqual([true, false]);
    }
  });

  it("reads only the repository in every job, and the gate the environments' rules", () => {
    expect(workflow).toMatchObject({ permissions: {} });
    expect(gate!.permissions).toEqual({ contents: "read", actions: "read" });
    for (const job of [pending!, backup!, push!]) expect(job.permissions).toEqual({ contents: "read" });
  });

  describe("its secrets", () => {
    const named = (step: Step) => step.name ?? step.uses ?? "";
    const secretsOf = (step: Step) =>
      Object.entries(step.env ?? {}).flatMap(([name, value]) => (/secrets\./.test(value) ? [name] : []));

    it("go only to the steps that use them (a presence alone to the settings' checks): none to a job, none to an install", () => {
      for (const [name, job] of Object.entries(workflow.jobs)) expect(job.env, name).toBeUndefined();
      expect(
        [gate!, pending!, backup!, push!].flatMap((job) =>
          job.steps.map((step) => [named(step).split("@")[0], secretsOf(step)]),
        ),
      ).toEqual([
        ["actions/checkout", []],
        ["actions/setup-node", []],
        ["From the default branch only", []],
        ["Reviewed, or allowed unreviewed", ["PASSWORD_IN_REPOSITORY"]],
        ["actions/checkout", []],
        ["actions/setup-node", []],
        ["Settings", ["SUPABASE_DB_PUSH_URL", "PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY"]],
        ["What the project lacks", ["SUPABASE_DB_PUSH_URL"]],
        ["actions/checkout", []],
        ["actions/setup-node", []],
        ["Install", []],
        ["Back up the list, encrypted", ["PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY"]],
        ["Keep the backup 90 days", []],
        ["actions/checkout", []],
        ["actions/setup-node", []],
        ["Push the migrations", ["SUPABASE_DB_PUSH_URL"]],
      ]);
      // The gate's and the settings' get whether a secret is set, never its value.
      for (const step of [gate!.steps.at(-1)!, pending!.steps.find((step) => step.id === "settings")!])
        for (const value of Object.values(step.env ?? {}).filter((value) => /secrets\./.test(value)))
          expect(value).toMatch(/^\$\{\{ secrets\.\w+ != '' (&& 'set' \|\| '' )?\}\}$/);
    });

    it("the pinned CLI, through the project's script, pushes to the database the secret names, all it prints masked", () => {
      const commands = [pending!, push!].flatMap((job) =>
        job.steps.flatMap((step) =>
          /\bsupabase\b.*\bdb push\b/.test(step.run ?? "") ? [step.run!.trim()] : [],
        ),
      );
      expect(commands).toEqual([
        `${DEPLOY_COMMAND}="$SUPABASE_DB_PUSH_URL" --yes 2>&1 | node tools/github/mask.ts`,
      ]);
      expect(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.supabase).toBe(
        "node tools/supabase-cli.ts",
      );
    });

    it(
      "the script runs the pinned version, with install scripts off as the jobs run it",
      { timeout: 120_000 },
      () => {
        // `npm run` as the job runs it, from the repository's root; the first run fetches the CLI.
        const { status, stdout, stderr } = spawnSync(
          "npm",
          ["run", "--silent", "supabase", "--", "--version"],
          {
            cwd: ROOT,
            env: { ...process.env, npm_config_ignore_scripts: "true" },
            encoding: "utf8",
          },
        );
        expect(status, stderr).toBe(0);
        expect(stdout.trim()).toBe(SUPABASE_CLI.split("@")[1]);
      },
    );
  });

  describe("against a project", () => {
    let project: { folder: string; added: string[] };
    let owner: Database;
    let close: () => Promise<void>;
    let backend: LocalSupabase;
    /** The database's connection string, as SUPABASE_DB_PUSH_URL holds the live one's. */
    let databaseUrl: string;
    beforeAll(async () => {
      project = checkout();
      const opened = await openTestDatabase();
      owner = opened.owner;
      const name = (await owner.query<{ name: string }>("select current_database() as name")).rows[0]!.name;
      // Without sslmode=disable the CLI insists on TLS, which the test's server does not offer.
      databaseUrl = `${testServerUrl("postgres", name)}?sslmode=disable`;
      backend = await startLocalSupabase({ database: opened.database, port: 0, log: () => {} });
      await owner.exec(
        "insert into public.early_access (email) values ('ada@example.com'), ('bob@example.com')",
      );
      close = () => backend.close();
    });
    afterAll(() => close?.());

    /** The CLI's home is the test's (its telemetry off); npm's cache stays where the CLI is fetched. */
    const baseEnv = (event: string) =>
      runnerEnv(workflow, root, {
        GITHUB_EVENT_NAME: event,
        HOME: join(root, "home"),
        npm_config_cache: process.env.npm_config_cache || join(homedir(), ".npm"),
        SUPABASE_TELEMETRY_DISABLED: "1",
        DO_NOT_TRACK: "1",
      });

    /** The settings as the README tells the owner to set them, those named in `set`. */
    function settings(set: string[], age = "age1unused"): Pick<Context, "secrets" | "vars"> {
      const all: Record<string, string> = {
        SUPABASE_DB_PUSH_URL: databaseUrl,
        PUBLIC_SUPABASE_URL: backend.url.replace("127.0.0.1", "localhost"),
        SUPABASE_SECRET_KEY: backend.secretKey,
        BACKUP_PUBLIC_KEY: age,
      };
      const pick = (names: string[]) =>
        Object.fromEntries(names.filter((name) => set.includes(name)).map((name) => [name, all[name]!]));
      return {
        secrets: pick(["SUPABASE_DB_PUSH_URL", "PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY"]),
        vars: pick(["BACKUP_PUBLIC_KEY"]),
      };
    }

    /** GitHub's API, for the length of a test. */
    let api: Awaited<ReturnType<typeof startGitHubApi>> | undefined;
    afterEach(async () => {
      await api?.close();
      api = undefined;
    });

    /**
     * The gate's steps, against a stand-in for GitHub's API holding `environments`; the repository
     * holding the password itself (outside any environment) when `passwordInRepository`.
     */
    async function gates(
      github: Record<string, unknown>,
      {
        environments = {},
        passwordInRepository = false,
        vars = {},
      }: {
        environments?: Record<string, Environment>;
        passwordInRepository?: boolean;
        vars?: Record<string, string>;
      } = {},
    ) {
      api = await startGitHubApi({ name: REPOSITORY, lastCommit: daysAgo(1), environments });
      return runSteps(ownSteps(gate!), {
        baseEnv: { ...baseEnv(String(github.event_name)), GITHUB_API_URL: api.url },
        cwd: project.folder,
        context: {
          secrets: passwordInRepository ? { SUPABASE_DB_PUSH_URL: databaseUrl } : {},
          vars,
          github: { ...github, token: "ghs_job_token" },
        },
      });
    }

    /** The dry run's steps, after a gate that answered `push`. */
    const asks = (github: Record<string, unknown>, set: string[], push = "reviewed") =>
      runSteps(ownSteps(pending!), {
        baseEnv: baseEnv(String(github.event_name)),
        cwd: project.folder,
        context: { ...settings(set), github, needs: { gate: { outputs: { push } } } },
      });

    const applied = async () =>
      (
        await owner.query<{ version: string }>(
          "select version from supabase_migrations.schema_migrations order by version",
        )
      ).rows.map(({ version }) => version);
    const ours = readdirSync(join(ROOT, "supabase/migrations"))
      .filter((file) => file.endsWith(".sql"))
      .map((file) => file.slice(0, 14));

    const ALL = ["SUPABASE_DB_PUSH_URL", ...PUSH_SETTINGS];
    const REVIEWED = { production: { reviewers: ["ada"], branches: ["main"] } };
    const UNREVIEWED = { production: { reviewers: [], branches: ["main"] } };
    const BOTH_WAYS =
      "Either give it a required reviewer (`npm run deploy -- --github` does, or Settings → Environments → " +
      "production → Required reviewers: on a public repository, or GitHub Enterprise), or, to push without " +
      "anyone approving (the only way in a private repository on GitHub Free, Pro or Team), set the repository " +
      "variable ALLOW_UNREVIEWED_PUSH to true (README: GitHub's jobs).";

    describe("the gate, before any step holds the password", () => {
      it("an environment with a reviewer: green, each push waiting for that person, said in the summary", async () => {
        const run = await gates(EVENTS.tested, { environments: REVIEWED });
        expect(run.status, run.output).toBe(0);
        expect(run.output).toBe("");
        expect(run.steps.review!.outputs).toEqual({ push: "reviewed" });
        expect(run.summary).toBe("Each push waits for the approval of ada (the `production` environment).\n");
        // Read with the job's token: the environment, then its branch rules.
        expect(api!.requests).toEqual([
          { method: "GET", path: `/repos/${REPOSITORY}/environments/production`, token: "ghs_job_token" },
          {
            method: "GET",
            path: `/repos/${REPOSITORY}/environments/production/deployment-branch-policies`,
            token: "ghs_job_token",
          },
        ]);
      });

      it.each([
        [
          "an environment without a reviewer",
          { environments: UNREVIEWED },
          "The `production` environment has no required reviewer",
        ],
        [
          "no environment, the password a repository secret (a free private repository)",
          { passwordInRepository: true },
          "There is no `production` environment",
        ],
      ])("%s: fails, naming both ways, and pushes nothing", async (_, setting, start) => {
        const run = await gates(EVENTS.tested, setting);
        expect(run.status, run.output).toBe(1);
        const message = `${start}, so a push would apply migrations that nobody approved: nothing pushed. ${BOTH_WAYS}`;
        expect(run.output).toBe(`::error title=Push without a reviewer::${message}\n`);
        expect(run.summary).toBe(`## Push without a reviewer\n\n${message}\n`);
        expect(run.steps.review!.outputs).toEqual({ push: "" });
        expect(evaluate(pending!.if!, { needs: { gate: run.steps.review! } })).toBe(false);
      });

      const UNREVIEWED_NOTICE = (start: string) =>
        `::notice title=Push unreviewed::${start}, and ALLOW_UNREVIEWED_PUSH is true: the tested migrations are ` +
        "pushed without anyone approving.\n";
      it.each([
        [
          "an environment without a reviewer, and ALLOW_UNREVIEWED_PUSH: pushing unreviewed",
          { environments: UNREVIEWED, vars: { ALLOW_UNREVIEWED_PUSH: "true" } },
          UNREVIEWED_NOTICE("The `production` environment has no required reviewer"),
          "unreviewed",
        ],
        [
          "no environment (a free private repository), and ALLOW_UNREVIEWED_PUSH: pushing unreviewed",
          { passwordInRepository: true, vars: { ALLOW_UNREVIEWED_PUSH: "true" } },
          UNREVIEWED_NOTICE("There is no `production` environment"),
          "unreviewed",
        ],
        [
          "a copy not set up (no environment, no password): nothing to push",
          {},
          "::notice title=Migrations not set up::Run `npm run deploy -- --github` to turn it on: it makes the " +
            "`production` environment and puts SUPABASE_DB_PUSH_URL in it (README: GitHub's jobs).\n",
          "",
        ],
      ])("%s: green, said in a notice", async (_, setting, notice, push) => {
        const run = await gates(EVENTS.tested, setting);
        expect(run.status, run.output).toBe(0);
        expect(run.output).toBe(notice);
        expect(run.steps.review!.outputs).toEqual({ push });
      });

      it("a dispatch from another branch: fails, saying so, and asks nothing", async () => {
        const run = await gates(EVENTS.dispatched("experiment"), { environments: REVIEWED });
        expect(run.status, run.output).toBe(1);
        expect(run.output).toBe(
          "::error title=Not the default branch::Migrations are pushed from main only, once tested; this run is on " +
            "experiment: nothing pushed. Run it from main (Run workflow → Branch).\n",
        );
        expect(run.steps.review!.outcome).toBe("skipped");
        expect(api!.requests).toEqual([]);
      });
    });

    it("an environment without the password: green, a notice naming what to set, nothing asked", async () => {
      const run = await asks(EVENTS.tested, []);
      expect(run.status, run.output).toBe(0);
      expect(run.output).toBe(
        "::notice title=Migrations not set up::Set SUPABASE_DB_PUSH_URL in the repository's Settings → Secrets and " +
          "variables → Actions to turn it on (README: GitHub's jobs).\n",
      );
      expect(run.steps.pending!.outcome).toBe("skipped");
    });

    it("with some of its settings: fails, naming the missing ones, and asks nothing", async () => {
      const run = await asks(EVENTS.tested, ["SUPABASE_DB_PUSH_URL", "PUBLIC_SUPABASE_URL"]);
      expect(run.status, run.output).toBe(1);
      expect(run.output).toBe(
        "::error title=Migrations missing settings::Some of its settings are set, not " +
          "SUPABASE_SECRET_KEY and BACKUP_PUBLIC_KEY: set them in the repository's Settings → Secrets and " +
          "variables → Actions (README: GitHub's jobs).\n",
      );
      expect(run.steps.pending!.outcome).toBe("skipped");
    });

    it(
      "a project the CLI cannot reach: fails, with the CLI's words, and not a character of the password",
      { timeout: 120_000 },
      async () => {
        const password = "s3cr@t/pw";
        const unreachable = databaseUrl
          .replace(/:\d+\//, ":1/")
          .replace("postgres://postgres@", `postgres://postgres:${encodeURIComponent(password)}@`);
        const run = await runSteps(ownSteps(pending!), {
          baseEnv: baseEnv("workflow_run"),
          cwd: project.folder,
          context: {
            ...settings(ALL),
            secrets: { ...settings(ALL).secrets, SUPABASE_DB_PUSH_URL: unreachable },
            github: EVENTS.tested,
            needs: { gate: { outputs: { push: "reviewed" } } },
          },
        });
        expect(run.status, run.output).toBe(1);
        expect(run.output).toMatch(
          /^::error title=Migrations unknown::The Supabase CLI's dry run could not tell which migrations the project lacks: .*(refused|connect)/m,
        );
        expect(run.steps.pending!.outputs).toEqual({});
        // The runner is asked to mask the parts it cannot know; past that, none is printed.
        const [masks, rest] = [
          run.output.split("\n").filter((line) => line.startsWith("::add-mask::")),
          run.output
            .split("\n")
            .filter((line) => !line.startsWith("::add-mask::"))
            .join("\n"),
        ];
        expect(masks).toEqual([`::add-mask::${encodeURIComponent(password)}`, `::add-mask::${password}`]);
        for (const part of [unreachable, password, encodeURIComponent(password)]) {
          expect(rest).not.toContain(part);
          expect(run.summary).not.toContain(part);
        }
      },
    );

    it(
      "unreviewed, as the owner allowed: lists what the project lacks, saying the push goes without review, and pushes nothing itself",
      { timeout: 120_000 },
      async () => {
        const run = await asks(EVENTS.tested, ALL, "unreviewed");
        expect(run.status, run.output).toBe(0);
        expect(run.steps.pending!.outputs).toEqual({ migrations: project.added.join(" ") });
        expect(run.summary).toMatch(
          /\nThe push applies them, after an encrypted backup of the list, without review: the repository variable ALLOW_UNREVIEWED_PUSH says so\.\n$/,
        );
        expect(await applied()).toEqual(ours);
      },
    );

    it(
      "after the tests, reviewed, with two migrations from two commits pending: lists both, backs the list up, pushes both; then nothing is left",
      { timeout: 240_000 },
      async () => {
        const gated = await gates(EVENTS.tested, { environments: REVIEWED });
        expect(gated.status, gated.output).toBe(0);
        const needsGate = { gate: gated.steps.review! };
        const identity = await generateIdentity();
        const age = await identityToRecipient(identity);
        const context = { ...settings(ALL, age), github: EVENTS.tested };
        const asked = await runSteps(ownSteps(pending!), {
          baseEnv: baseEnv("workflow_run"),
          cwd: project.folder,
          context: { ...context, needs: needsGate },
        });
        expect(asked.status, asked.output).toBe(0);
        const migrations = asked.steps.pending!.outputs.migrations!;
        expect(migrations).toBe(project.added.join(" "));
        expect(asked.summary).toBe(
          "## 2 migrations the project lacks\n\n" +
            project.added.map((file) => `- \`${file}\`\n`).join("") +
            "\nThe push applies them, after an encrypted backup of the list, once approved in the `production` environment.\n",
        );

        const needs = { ...needsGate, pending: { outputs: { migrations } }, backup: { outputs: {} } };
        expect(evaluate(push!.if!, { github: EVENTS.tested, needs })).toBe(true);
        const runnerTemp = mkdtempSync(join(root, "runner-temp-"));
        const backedUp = await runSteps(ownSteps(backup!), {
          baseEnv: baseEnv("workflow_run"),
          cwd: project.folder,
          runnerTemp,
          context: { ...context, needs },
        });
        expect(backedUp.status, backedUp.output).toBe(0);
        const pushed = await runSteps(ownSteps(push!), {
          baseEnv: baseEnv("workflow_run"),
          cwd: project.folder,
          context: { ...context, needs },
        });
        expect(pushed.status, pushed.output).toBe(0);
        expect(await applied()).toEqual([...ours, ...project.added.map((file) => file.slice(0, 14))]);
        const { rows } = await owner.query(
          "select to_regclass('public.first_table') is not null as first, to_regclass('public.second_table') is not null as second",
        );
        expect(rows).toEqual([{ first: true, second: true }]);

        // The backup, made before the push, decrypts to the list.
        const decrypter = new Decrypter();
        decrypter.addIdentity(identity);
        const list = await decrypter.decrypt(
          readFileSync(join(runnerTemp, "sign-ups-before-migrations.csv.age")),
          "text",
        );
        expect(
          list
            .split("\r\n")
            .slice(1, 3)
            .map((line) => line.split(",")[0])
            .sort(),
        ).toEqual(['"ada@example.com"', '"bob@example.com"']);

        const again = await runSteps(ownSteps(pending!), {
          baseEnv: baseEnv("workflow_run"),
          cwd: project.folder,
          context: { ...context, needs: needsGate },
        });
        expect(again.status, again.output).toBe(0);
        expect(again.steps.pending!.outputs).toEqual({ migrations: "" });
        expect(again.summary).toBe("The project has every migration: nothing to push.\n");
        expect(
          evaluate(push!.if!, {
            github: EVENTS.tested,
            needs: { ...needsGate, pending: again.steps.pending! },
          }),
        ).toBe(false);
      },
    );
  });
});
