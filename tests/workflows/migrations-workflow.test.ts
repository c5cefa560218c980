// The migrations' workflow (.github/workflows/migrations.yml): after the tests pass on the default
// branch, or on demand from it, it asks the project which migrations it lacks and pushes them all,
// in the `production` environment the owner protects with a review, an encrypted backup of the
// list first; on a pull request, it lists them. Its steps run here with bash as the runner runs
// them, in a checkout of their own whose last commits each add a migration and the last one
// changes none, against a database set up as a hosted project is, with every migration of this
// repository recorded (a copy of the tests' template, standing in for the live project), through
// the pinned CLI (`npm run supabase`, tools/supabase-cli.ts) for real. Also: a copy without its
// settings, with some, a dispatch from another branch, and a project the CLI cannot reach.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { Decrypter, generateIdentity, identityToRecipient } from "age-encryption";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { DEPLOY_COMMAND, SUPABASE_CLI } from "../../tools/supabase-cli.ts";
import { openTestDatabase, testServerUrl } from "../support/database.ts";
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
const { pending, push } = workflow.jobs as Required<typeof workflow.jobs>;
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
  pullRequest: {
    event_name: "pull_request",
    ref_name: "7/merge",
    event: { repository: { default_branch: "main" } },
    repository: REPOSITORY,
  },
};

describe("the migrations' workflow", () => {
  it("runs on pull requests that change the migrations or itself, after the tests on main, and on demand", () => {
    const paths = ["supabase/migrations/**", ".github/workflows/migrations.yml"];
    expect(workflow.on).toEqual({
      pull_request: { paths },
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
    ["a pull request", EVENTS.pullRequest, true],
  ])("asks the project after %s: %s", (_, github, asks) => {
    expect(Boolean(evaluate(pending!.if!, { github }))).toBe(asks);
  });

  it("pushes in the production environment, on the tested commit, only what the project lacks and never for a pull request", () => {
    expect(push).toMatchObject({ needs: "pending", environment: "production" });
    for (const job of [pending!, push!])
      expect(job.steps[0]).toMatchObject({
        uses: expect.stringMatching(/^actions\/checkout@/),
        with: {
          ref: "${{ github.event.workflow_run.head_sha || github.sha }}",
          "persist-credentials": false,
        },
      });
    const pushes = (github: Record<string, unknown>, migrations: string) =>
      Boolean(evaluate(push!.if!, { github, needs: { pending: { outputs: { migrations } } } }));
    expect(pushes(EVENTS.tested, "20270101000000_a.sql")).toBe(true);
    expect(pushes(EVENTS.tested, "")).toBe(false);
    expect(pushes(EVENTS.pullRequest, "20270101000000_a.sql")).toBe(false);
  });

  it("reads only the repository, in every job", () => {
    expect(workflow).toMatchObject({ permissions: {} });
    for (const job of Object.values(workflow.jobs)) expect(job.permissions).toEqual({ contents: "read" });
  });

  describe("its secrets", () => {
    const named = (step: Step) => step.name ?? step.uses ?? "";
    const secretsOf = (step: Step) =>
      Object.entries(step.env ?? {}).flatMap(([name, value]) => (/secrets\./.test(value) ? [name] : []));

    it("go only to the steps that use them: none to a job, none to an install", () => {
      for (const [name, job] of Object.entries(workflow.jobs)) expect(job.env, name).toBeUndefined();
      expect(
        [pending!, push!].flatMap((job) => job.steps.map((step) => [named(step), secretsOf(step)])),
      ).toEqual([
        ["actions/checkout@v6", []],
        ["actions/setup-node@v6", []],
        ["From the default branch only", []],
        ["Settings", ["SUPABASE_DB_PUSH_URL", "PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY"]],
        ["What the project lacks", ["SUPABASE_DB_PUSH_URL"]],
        ["actions/checkout@v6", []],
        ["actions/setup-node@v6", []],
        ["Install", []],
        ["Back up the list, encrypted", ["PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY"]],
        ["Keep the backup 90 days", []],
        ["Push the migrations", ["SUPABASE_DB_PUSH_URL"]],
      ]);
    });

    it("the database's password comes after no install script: no install before it, or one without scripts", () => {
      for (const job of [pending!, push!]) {
        const first = job.steps.findIndex((step) => secretsOf(step).includes("SUPABASE_DB_PUSH_URL"));
        const before = job.steps.slice(0, first);
        expect(before.flatMap((step) => (step.uses ? [step.uses.split("@")[0]] : []))).toEqual(
          expect.arrayContaining(["actions/checkout"]),
        );
        expect(
          before.filter(
            (step) => step.uses && !/^actions\/(checkout|setup-node|upload-artifact)@/.test(step.uses),
          ),
        ).toEqual([]);
        for (const step of before.filter((step) => /\bnpm (ci|install|i)\b/.test(step.run ?? "")))
          expect(step.run).toMatch(/--ignore-scripts/);
      }
      expect(push!.steps.find((step) => step.id === "install")?.run).toBe(
        "npm ci --ignore-scripts --no-audit --no-fund",
      );
    });

    it("the pinned CLI, through the project's script, pushes to the database the secret names", () => {
      const commands = [pending!, push!].flatMap((job) =>
        job.steps.flatMap((step) =>
          /\bsupabase\b.*\bdb push\b/.test(step.run ?? "") ? [step.run!.trim()] : [],
        ),
      );
      expect(commands).toEqual([`${DEPLOY_COMMAND}="$SUPABASE_DB_PUSH_URL" --yes`]);
      expect(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.supabase).toBe(
        "node tools/supabase-cli.ts",
      );
    });

    it("the script runs the pinned version", { timeout: 120_000 }, () => {
      // `npm run` as the job runs it, from the repository's root; the first run fetches the CLI.
      const { status, stdout, stderr } = spawnSync(
        "npm",
        ["run", "--silent", "supabase", "--", "--version"],
        {
          cwd: ROOT,
          encoding: "utf8",
        },
      );
      expect(status, stderr).toBe(0);
      expect(stdout.trim()).toBe(SUPABASE_CLI.split("@")[1]);
    });
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

    const asks = (github: Record<string, unknown>, set: string[], runnerTemp?: string) =>
      runSteps(ownSteps(pending!), {
        baseEnv: baseEnv(String(github.event_name)),
        cwd: project.folder,
        runnerTemp,
        context: { ...settings(set), github },
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
    const NOTICE =
      "::notice title=Migrations not set up::Set SUPABASE_DB_PUSH_URL in the repository's Settings → Secrets and " +
      "variables → Actions to turn it on (README: GitHub's jobs).\n";

    it.each([
      ["after the tests", EVENTS.tested],
      ["a pull request (from a fork: no secrets)", EVENTS.pullRequest],
    ])(
      "a copy with none of its settings, %s: green, a notice naming what to set, nothing asked",
      async (_, github) => {
        const run = await asks(github, []);
        expect(run.status, run.output).toBe(0);
        expect(run.output).toBe(NOTICE);
        expect(run.steps.pending!.outcome).toBe("skipped");
      },
    );

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

    it("a dispatch from another branch: fails, saying so, and asks and pushes nothing", async () => {
      const run = await asks(EVENTS.dispatched("experiment"), ALL);
      expect(run.status, run.output).toBe(1);
      expect(run.output).toBe(
        "::error title=Not the default branch::Migrations are pushed from main only, once tested; this run is on " +
          "experiment: nothing pushed. Run it from main (Run workflow → Branch).\n",
      );
      expect(run.steps.pending!.outcome).toBe("skipped");
      expect(await applied()).toEqual(ours);
    });

    it("a project the CLI cannot reach: fails, with the CLI's words", { timeout: 120_000 }, async () => {
      const unreachable = databaseUrl.replace(/:\d+\//, ":1/");
      const run = await runSteps(ownSteps(pending!), {
        baseEnv: baseEnv("workflow_run"),
        cwd: project.folder,
        context: {
          ...settings(ALL),
          secrets: { ...settings(ALL).secrets, SUPABASE_DB_PUSH_URL: unreachable },
          github: EVENTS.tested,
        },
      });
      expect(run.status, run.output).toBe(1);
      expect(run.output).toMatch(
        /^::error title=Migrations unknown::The Supabase CLI's dry run could not tell which migrations the project lacks: .*(refused|connect)/m,
      );
      expect(run.steps.pending!.outputs).toEqual({});
    });

    it(
      "a pull request: lists what the project lacks, from every commit, and pushes nothing",
      { timeout: 120_000 },
      async () => {
        const run = await asks(EVENTS.pullRequest, ["SUPABASE_DB_PUSH_URL"]);
        expect(run.status, run.output).toBe(0);
        expect(run.steps.pending!.outputs).toEqual({ migrations: project.added.join(" ") });
        expect(run.summary).toBe(
          "## 2 migrations the project lacks\n\n" +
            project.added.map((file) => `- \`${file}\`\n`).join("") +
            "\nOnce merged and tested on the default branch, the push applies them.\n",
        );
        expect(await applied()).toEqual(ours);
      },
    );

    it(
      "after the tests, with two migrations from two commits pending: lists both, backs the list up, pushes both; then nothing is left",
      { timeout: 240_000 },
      async () => {
        const identity = await generateIdentity();
        const age = await identityToRecipient(identity);
        const context = { ...settings(ALL, age), github: EVENTS.tested };
        const asked = await runSteps(ownSteps(pending!), {
          baseEnv: baseEnv("workflow_run"),
          cwd: project.folder,
          context,
        });
        expect(asked.status, asked.output).toBe(0);
        const migrations = asked.steps.pending!.outputs.migrations!;
        expect(migrations).toBe(project.added.join(" "));
        expect(asked.summary).toContain(
          "\nThe push applies them, after an encrypted backup of the list, once approved in the `production` environment.\n",
        );

        const needs = { pending: { outputs: { migrations } } };
        expect(evaluate(push!.if!, { github: EVENTS.tested, needs })).toBe(true);
        const runnerTemp = mkdtempSync(join(root, "runner-temp-"));
        const pushed = await runSteps(ownSteps(push!), {
          baseEnv: baseEnv("workflow_run"),
          cwd: project.folder,
          runnerTemp,
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
          context,
        });
        expect(again.status, again.output).toBe(0);
        expect(again.steps.pending!.outputs).toEqual({ migrations: "" });
        expect(again.summary).toBe("The project has every migration: nothing to push.\n");
        expect(evaluate(push!.if!, { github: EVENTS.tested, needs: { pending: again.steps.pending! } })).toBe(
          false,
        );
      },
    );
  });
});
