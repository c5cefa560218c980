// The migrations' workflow (.github/workflows/migrations.yml): it pushes only after the tests pass
// on main, a tested commit that changes a migration (or on demand), in the `production` environment
// the owner can protect with a review, an encrypted backup of the list first; each secret only in
// the steps that use it, so that no package `npm ci` installs can read one. Its check of the
// settings runs here with bash as the runner runs it, in a checkout of its own; the push runs the
// pinned CLI (`npm run supabase`, tools/supabase-cli.ts, the version tests/database/deploy.test.ts
// rehearses), which here shows it reads the words as meant: the linked project, never the local
// database (where the CLI 3.x pushes without `--remote`).
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEPLOY_COMMAND, runSupabase, SUPABASE_CLI } from "../../tools/supabase-cli.ts";
import { withoutTestEnvironment } from "../test-environment.ts";
import { ROOT, readWorkflow, runSteps, type Step } from "./workflow.ts";

const workflow = readWorkflow("migrations.yml");
const { settings, push, "dry-run": dryRun } = workflow.jobs as Required<typeof workflow.jobs>;
const CLI_SECRETS = ["SUPABASE_ACCESS_TOKEN", "SUPABASE_DB_PASSWORD", "SUPABASE_PROJECT_ID"];
const BACKUP_SETTINGS = ["PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY", "BACKUP_PUBLIC_KEY"];
const baseEnv = withoutTestEnvironment(process.env);

const root = mkdtempSync(join(tmpdir(), "migrations-workflow-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A checkout of two commits: the first adds a migration, the second changes only the README. */
function checkout() {
  const folder = mkdtempSync(join(root, "checkout-"));
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
      cwd: folder,
      encoding: "utf8",
    }).trim();
  git("init", "--quiet");
  mkdirSync(join(folder, "supabase/migrations"), { recursive: true });
  writeFileSync(join(folder, "README.md"), "x\n");
  git("add", ".");
  git("commit", "--quiet", "-m", "first");
  writeFileSync(join(folder, "supabase/migrations/20260101000000_a.sql"), "select 1;\n");
  git("add", ".");
  git("commit", "--quiet", "-m", "a migration");
  const migration = git("rev-parse", "HEAD");
  writeFileSync(join(folder, "README.md"), "y\n");
  git("commit", "--quiet", "-am", "words");
  return { folder, migration, words: git("rev-parse", "HEAD") };
}
const repository = checkout();

/** The settings job's check, on `event`, with these settings set; the tested commit for workflow_run. */
function checkSettings(event: string, set: string[], tested = repository.migration) {
  const named = (names: string[]) =>
    Object.fromEntries(names.filter((name) => set.includes(name)).map((name) => [name, "set"]));
  return runSteps(
    settings!.steps.filter((step) => step.run !== undefined),
    {
      baseEnv,
      cwd: repository.folder,
      context: {
        secrets: named([...CLI_SECRETS, "PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY"]),
        vars: named(["BACKUP_PUBLIC_KEY"]),
        github: {
          event_name: event,
          event: event === "workflow_run" ? { workflow_run: { head_sha: tested } } : {},
        },
      },
    },
  );
}

describe("the migrations' workflow", () => {
  it("runs on pull requests that change the migrations or itself, after the tests on main, and on demand", () => {
    const paths = ["supabase/migrations/**", ".github/workflows/migrations.yml"];
    expect(workflow.on).toEqual({
      pull_request: { paths },
      workflow_run: { workflows: ["Tests"], types: ["completed"], branches: ["main"] },
      workflow_dispatch: null,
    });
  });

  it("after the tests, goes on only when they passed, on a push to this repository's main", () => {
    expect(settings!.if?.replace(/\s+/g, " ")).toBe(
      "github.event_name != 'workflow_run' || (github.event.workflow_run.conclusion == 'success' && " +
        "github.event.workflow_run.event == 'push' && github.event.workflow_run.head_repository.full_name == github.repository)",
    );
  });

  describe("its settings' check", () => {
    it.each([
      { case: "none set (a fork's pull request)", set: [] as string[] },
      { case: "one missing", set: ["SUPABASE_ACCESS_TOKEN", "SUPABASE_PROJECT_ID"] },
    ])("on a pull request, $case: green, a notice naming what is missing, no dry run", async ({ set }) => {
      const run = await checkSettings("pull_request", set);
      expect(run.status, run.output).toBe(0);
      const missing = CLI_SECRETS.filter((name) => !set.includes(name));
      expect(run.output).toMatch(
        new RegExp(`^::notice title=No dry run::Migrations not pushed: no ${missing.join(" ")}\\. `, "m"),
      );
      expect(run.outputs).toBe("ready=false\n");
    });

    it("on a pull request, the CLI's three: ready for the dry run (no backup needed)", async () => {
      const run = await checkSettings("pull_request", CLI_SECRETS);
      expect(run).toMatchObject({ status: 0, output: "", outputs: "ready=true\n" });
    });

    it.each(["workflow_dispatch", "workflow_run"])(
      "on main (%s), without the backup's key: green, but a warning and the summary name what is missing",
      async (event) => {
        const run = await checkSettings(event, [
          ...CLI_SECRETS,
          "PUBLIC_SUPABASE_URL",
          "SUPABASE_SECRET_KEY",
        ]);
        expect(run.status, run.output).toBe(0);
        const message =
          "Migrations not pushed: no BACKUP_PUBLIC_KEY. Set them in Settings → Secrets and variables → Actions, then " +
          "Actions → Migrations → Run workflow (README: GitHub's jobs).";
        expect(run.output).toBe(`::warning title=Migrations not pushed::${message}\n`);
        expect(run.summary).toBe(`## Migrations not pushed\n\n${message}\n`);
        expect(run.outputs).toBe("ready=false\n");
      },
    );

    it("on main, all six, a tested commit that adds a migration: ready", async () => {
      const run = await checkSettings("workflow_run", [...CLI_SECRETS, ...BACKUP_SETTINGS]);
      expect(run).toMatchObject({ status: 0, output: "", outputs: "ready=true\n" });
    });

    it("on main, a tested commit that changes no migration: nothing to push, says so", async () => {
      const run = await checkSettings("workflow_run", [...CLI_SECRETS, ...BACKUP_SETTINGS], repository.words);
      expect(run.status, run.output).toBe(0);
      expect(run.output).toMatch(
        /^::notice title=No migration to push::The tested commit changes no migration/m,
      );
      expect(run.outputs).toBe("ready=false\n");
    });

    it("on demand, all six: ready, whatever the last commit changed", async () => {
      const run = await checkSettings("workflow_dispatch", [...CLI_SECRETS, ...BACKUP_SETTINGS]);
      expect(run).toMatchObject({ status: 0, output: "", outputs: "ready=true\n" });
    });
  });

  describe("the push", () => {
    const named = (step: Step) => step.name ?? step.uses ?? "";

    it("waits for the check, in the production environment, on the tested commit", () => {
      expect(push).toMatchObject({
        needs: "settings",
        if: "github.event_name != 'pull_request' && needs.settings.outputs.ready == 'true'",
        environment: "production",
      });
      expect(push!.steps[0]).toMatchObject({
        uses: expect.stringMatching(/^actions\/checkout@/),
        with: { ref: "${{ github.event.workflow_run.head_sha || github.sha }}" },
      });
      expect(dryRun).toMatchObject({
        needs: "settings",
        if: "github.event_name == 'pull_request' && needs.settings.outputs.ready == 'true'",
      });
      expect(dryRun!.environment).toBeUndefined();
    });

    it("backs the list up, encrypted, kept 90 days, before it links and pushes", () => {
      expect(push!.steps.slice(3).map(named)).toEqual([
        "Back up the list, encrypted",
        "Keep the backup 90 days",
        "Link the project",
        "Push the migrations",
      ]);
      const [backup, keep] = push!.steps.slice(3);
      expect(backup!.run).toBe(
        'npm run sign-ups -- backup -o "$RUNNER_TEMP/sign-ups-before-migrations.csv.age"',
      );
      expect(keep).toMatchObject({
        uses: expect.stringMatching(/^actions\/upload-artifact@/),
        with: {
          "retention-days": 90,
          "if-no-files-found": "error",
          path: "${{ runner.temp }}/sign-ups-before-migrations.csv.age",
        },
      });
    });

    it("gives each secret only to the steps that use it: none to a job, none to the install", () => {
      for (const [name, job] of Object.entries(workflow.jobs)) expect(job.env, name).toBeUndefined();
      const secretsOf = (step: Step) =>
        Object.entries(step.env ?? {}).flatMap(([name, value]) => (/secrets\./.test(value) ? [name] : []));
      const given = [dryRun!, push!].flatMap((job) =>
        job.steps.map((step) => [named(step), secretsOf(step)]),
      );
      expect(given).toEqual([
        ["actions/checkout@v6", []],
        ["actions/setup-node@v6", []],
        ["Install", []],
        ["Link the project", CLI_SECRETS],
        ["What the push would apply", CLI_SECRETS],
        ["actions/checkout@v6", []],
        ["actions/setup-node@v6", []],
        ["Install", []],
        ["Back up the list, encrypted", ["PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY"]],
        ["Keep the backup 90 days", []],
        ["Link the project", CLI_SECRETS],
        ["Push the migrations", CLI_SECRETS],
      ]);
    });

    const RUN = "npm run supabase -- ";
    const supabaseCommands = [dryRun!, push!].flatMap((job) =>
      job.steps.flatMap((step) => (step.run?.includes("supabase --") ? [step.run.trim()] : [])),
    );

    it("uses the pinned CLI, through the project's script: no other installer, no other version", () => {
      expect(supabaseCommands.filter((command) => !command.startsWith(RUN))).toEqual([]);
      expect(
        [dryRun!, push!].flatMap((job) => job.steps.filter((step) => step.uses?.includes("supabase"))),
      ).toEqual([]);
      for (const job of [dryRun!, push!])
        expect(job.steps.find((step) => step.id === "install")?.run).toBe("npm ci --no-audit --no-fund");
      const { scripts } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
        scripts: Record<string, string>;
      };
      expect(scripts.supabase).toBe("node tools/supabase-cli.ts");
    });

    it("the script runs the pinned version", { timeout: 120_000 }, () => {
      // `npm run` as the job runs it, from the repository's root; the first run fetches the CLI.
      const version = ["run", "--silent", "supabase", "--", "--version"];
      const { status, stdout, stderr } = spawnSync("npm", version, {
        cwd: ROOT,
        encoding: "utf8",
        env: baseEnv,
      });
      expect(status, stderr).toBe(0);
      expect(stdout.trim()).toBe(SUPABASE_CLI.split("@")[1]);
    });

    it("links, then lists on a pull request and pushes on main, each the deploy command to the linked project", () => {
      expect(supabaseCommands).toEqual([
        `${RUN}link --project-ref "$SUPABASE_PROJECT_ID"`,
        `${DEPLOY_COMMAND} --dry-run`,
        `${RUN}link --project-ref "$SUPABASE_PROJECT_ID"`,
        `${DEPLOY_COMMAND} --yes`,
      ]);
    });

    // In a copy of supabase/ that no project is linked to, and without a token: the CLI must
    // look for the linked project, and say its words are current ones.
    const folder = mkdtempSync(join(root, "supabase-"));
    cpSync(join(ROOT, "supabase"), join(folder, "supabase"), {
      recursive: true,
      filter: (source) => !source.includes("/.temp"),
    });

    it.each(supabaseCommands.filter((command) => command.includes("db push")))(
      "%s targets the linked project with the pinned CLI",
      (command) => {
        const args = command.slice(RUN.length).split(" ");
        const { status, stdout, stderr } = runSupabase(args, {
          cwd: folder,
          env: {
            ...baseEnv,
            HOME: join(folder, "home"),
            SUPABASE_ACCESS_TOKEN: "",
            SUPABASE_DB_PASSWORD: "",
            // The CLI 3.x also takes the linked project from here: unset, as in a fresh checkout.
            SUPABASE_PROJECT_ID: "",
            SUPABASE_TELEMETRY_DISABLED: "1",
            DO_NOT_TRACK: "1",
          },
          timeout: 60_000,
        });
        const output = stdout + stderr;
        expect(status, output).toBe(1);
        expect(output).toMatch(/Cannot find project ref\. Have you run supabase link\?/);
        expect(output).not.toMatch(/deprecated|unknown flag/i);
      },
      // As long as the CLI may take (npx, then the CLI's own start, each a few seconds on a busy machine).
      60_000,
    );
  });
});
