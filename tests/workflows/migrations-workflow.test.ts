// The migrations' workflow (.github/workflows/migrations.yml): its check of the secrets, run here
// with bash as the runner runs it, passes with a notice and pushes nothing when they are not
// all set (as on a pull request from a fork); otherwise its push runs the pinned CLI
// (`npm run supabase`, tools/supabase-cli.ts, the version tests/database/deploy.test.ts
// rehearses) against the linked project, a dry run on a pull request. The link and the push need
// Supabase itself; here the pinned CLI shows it reads their words as meant: the linked project,
// never the local database (where the CLI 3.x pushes without `--remote`).
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runSupabase, SUPABASE_CLI } from "../../tools/supabase-cli.ts";
import { withoutTestEnvironment } from "../test-environment.ts";
import { ROOT, readWorkflow, runSteps } from "./workflow.ts";

const workflow = readWorkflow("migrations.yml");
const { settings, push } = workflow.jobs as Required<typeof workflow.jobs>;
const SECRETS = ["SUPABASE_ACCESS_TOKEN", "SUPABASE_DB_PASSWORD", "SUPABASE_PROJECT_ID"];
const baseEnv = withoutTestEnvironment(process.env);

describe("the migrations' workflow", () => {
  it("runs on a push to main and on pull requests that change the migrations or itself", () => {
    const paths = ["supabase/migrations/**", ".github/workflows/migrations.yml"];
    expect(workflow.on).toEqual({ push: { branches: ["main"], paths }, pull_request: { paths } });
  });

  describe("without the secrets", () => {
    it.each([
      { case: "none set (a fork's pull request)", set: [] as string[] },
      { case: "one missing", set: ["SUPABASE_ACCESS_TOKEN", "SUPABASE_PROJECT_ID"] },
    ])("$case: passes with a notice naming what is missing, and pushes nothing", async ({ set }) => {
      const secrets = Object.fromEntries(set.map((name) => [name, "set"]));
      const run = await runSteps(settings!.steps, { baseEnv, context: { secrets } });
      expect(run.status, run.output).toBe(0);
      const missing = SECRETS.filter((name) => !set.includes(name));
      expect(run.output).toMatch(
        new RegExp(`^::notice::Migrations not pushed: no ${missing.join(" ")} `, "m"),
      );
      expect(run.outputs).toBe("ready=false\n");
      // The push waits for the check, and runs only when it says so.
      expect(push!.needs).toBe("settings");
      expect(push!.if).toBe("needs.settings.outputs.ready == 'true'");
      expect(settings!.outputs).toEqual({ ready: "${{ steps.settings.outputs.ready }}" });
    });
  });

  it("with all three: ready, and no notice", async () => {
    const secrets = Object.fromEntries(SECRETS.map((name) => [name, "set"]));
    const run = await runSteps(settings!.steps, { baseEnv, context: { secrets } });
    expect(run).toMatchObject({ status: 0, output: "", outputs: "ready=true\n" });
  });

  describe("the push", () => {
    const RUN = "npm run supabase -- ";
    const supabaseCommands = push!.steps.flatMap((step) =>
      step.run?.includes("supabase") ? [{ step, command: step.run.trim() }] : [],
    );

    it("uses the pinned CLI, through the project's script: no other installer, no other version", () => {
      expect(supabaseCommands.filter(({ command }) => !command.startsWith(RUN))).toEqual([]);
      expect(push!.steps.filter((step) => step.uses?.includes("supabase"))).toEqual([]);
      expect(push!.steps.find((step) => step.id === "install")?.run).toBe("npm ci --no-audit --no-fund");
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

    it("links, then lists on a pull request and pushes on main, each to the linked project", () => {
      expect(supabaseCommands.map(({ step, command }) => [step.if ?? "always", command])).toEqual([
        ["always", `${RUN}link --project-ref "$SUPABASE_PROJECT_ID"`],
        ["github.event_name == 'pull_request'", `${RUN}db push --remote --dry-run`],
        ["github.event_name == 'push'", `${RUN}db push --remote --yes`],
      ]);
      expect(push!.env).toEqual(Object.fromEntries(SECRETS.map((name) => [name, `\${{ secrets.${name} }}`])));
    });

    // In a copy of supabase/ that no project is linked to, and without a token: the CLI must
    // look for the linked project, and say its words are current ones.
    const folder = mkdtempSync(join(tmpdir(), "migrations-workflow-"));
    cpSync(join(ROOT, "supabase"), join(folder, "supabase"), {
      recursive: true,
      filter: (source) => !source.includes("/.temp"),
    });
    afterAll(() => rmSync(folder, { recursive: true, force: true }));

    it.each(supabaseCommands.filter(({ command }) => command.includes("db push")))(
      "$command targets the linked project with the pinned CLI",
      ({ command }) => {
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
