// Every workflow stays within GitHub's rules and asks for no more than it uses: nothing enables a
// workflow (GitHub stops a public repository's schedules after 60 days without activity, and the
// watch tells the owner instead: tools/github/inactivity.ts), no job may write to Actions (which
// could also delete the backups' artifacts), and each workflow grants nothing beyond reading the
// repository unless a job asks for it. Every action is pinned to a full commit (GitHub: "the only
// way to use an action as an immutable release"), its version beside it, and Dependabot keeps them
// and the npm packages current. And the secrets stay apart from package code: no job holding one
// restores an npm cache; before each step that holds one, no step runs a package's code (an install
// without scripts runs none) unless it held the same secret itself; the pinned CLI's dependencies
// are fetched with install scripts off; the database's password only in the environments, which
// the default branch alone reaches, and never in a run of a pull request.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import yaml from "js-yaml";
import { describe, expect, it } from "vitest";
import { ROOT, WORKFLOWS, readWorkflow, workflowFiles, type Step } from "./workflow.ts";

const workflows = workflowFiles().map((file) => ({ file, ...readWorkflow(file) }));

describe("GitHub's rules", () => {
  it("has the workflows to check", () => {
    expect(workflows.map(({ file }) => file)).toEqual(
      expect.arrayContaining(["migrations.yml", "watch.yml"]),
    );
  });

  it.each(workflows)("$file: no step enables a workflow", ({ jobs }) => {
    const scripts = Object.values(jobs).flatMap((job) => job.steps.flatMap((step) => step.run ?? []));
    expect(scripts.filter((script) => /workflows\/[^/\s]+\/enable|workflow enable/.test(script))).toEqual([]);
  });

  it.each(workflows)(
    "$file: grants no more than reading by default, and no job writing to Actions",
    ({ permissions, jobs }) => {
      expect([{}, { contents: "read" }]).toContainEqual(permissions);
      for (const job of Object.values(jobs)) expect([undefined, "read"]).toContain(job.permissions?.actions);
    },
  );
});

/**
 * The secrets a step's env holds (their values: a check of whether one is set holds none). A
 * `PUBLIC_` setting may be kept as a secret, but every page carries it: nothing to steal.
 */
const secretsOf = (step: Step) =>
  Object.entries(step.env ?? {}).flatMap(([name, value]) =>
    /secrets\./.test(value) && !/secrets\.\w+ != ''/.test(value) && !name.startsWith("PUBLIC_") ? [name] : [],
  );

/** Whether a step runs code of an installed or fetched package: npm's scripts and npx, an install with scripts. */
const runsPackages = (step: Step) =>
  /\bnpx\b|\bnpm (run|start|test|exec)\b/.test(step.run ?? "") ||
  (/\bnpm (ci|install|i)\b/.test(step.run ?? "") && !/--ignore-scripts/.test(step.run ?? ""));

describe("actions and packages, kept current and apart from the secrets", () => {
  it.each(workflowFiles())("%s: every action pinned to a full commit, its version in a comment", (file) => {
    const uses = readFileSync(join(WORKFLOWS, file), "utf8")
      .split("\n")
      .filter((line) => /^\s*(- )?uses:/.test(line));
    expect(uses.length).toBeGreaterThan(0);
    for (const line of uses) expect(line).toMatch(/uses: [\w.-]+\/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
  });

  it("Dependabot updates the actions and the npm packages weekly, each in one grouped pull request", () => {
    const config = yaml.load(readFileSync(join(ROOT, ".github/dependabot.yml"), "utf8")) as {
      updates: Array<{
        "package-ecosystem": string;
        schedule: { interval: string };
        groups: Record<string, { patterns: string[] }>;
      }>;
    };
    expect(config.updates.map((update) => update["package-ecosystem"]).sort()).toEqual([
      "github-actions",
      "npm",
    ]);
    for (const update of config.updates) {
      expect(update.schedule.interval).toBe("weekly");
      expect(Object.values(update.groups).map((group) => group.patterns)).toEqual([["*"]]);
    }
  });

  describe.each(workflows)("$file", ({ on, jobs }) => {
    it("no job holding a secret restores an npm cache or any other", () => {
      for (const [name, job] of Object.entries(jobs)) {
        if (!job.steps.some((step) => secretsOf(step).length > 0)) continue;
        for (const step of job.steps.filter((step) => step.uses?.startsWith("actions/setup-node@")))
          expect(step.with, name).toMatchObject({ "package-manager-cache": false });
        for (const step of job.steps) expect(step.with?.cache, name).toBeUndefined();
        expect(
          job.steps.filter((step) => step.uses?.startsWith("actions/cache@")),
          name,
        ).toEqual([]);
      }
    });

    it("before each step holding a secret, no package's code runs but in a step that held it too", () => {
      for (const [name, job] of Object.entries(jobs))
        job.steps.forEach((step, index) => {
          for (const secret of secretsOf(step))
            for (const before of job.steps.slice(0, index)) {
              if (runsPackages(before))
                expect(secretsOf(before), `${name}: ${step.name} after ${before.name}`).toContain(secret);
              if (before.uses)
                expect(before.uses, name).toMatch(/^actions\/(checkout|setup-node|upload-artifact)@/);
            }
        });
    });

    it("the pinned CLI's own dependencies are fetched with install scripts off", () => {
      for (const job of Object.values(jobs))
        for (const step of job.steps.filter((step) =>
          /npm run supabase|pending-migrations\.ts/.test(step.run ?? ""),
        ))
          expect(step.env, step.name).toMatchObject({ npm_config_ignore_scripts: "true" });
    });

    it("the database's password: only in a job of an environment limited to the default branch, never on a pull request", () => {
      for (const job of Object.values(jobs))
        if (job.steps.some((step) => secretsOf(step).includes("SUPABASE_DB_PUSH_URL")))
          expect(["production", "production-dry-run"]).toContain(job.environment);
      if (Object.values(jobs).some((job) => job.steps.some((step) => secretsOf(step).length > 0)))
        expect(Object.keys(on)).not.toContain("pull_request");
    });
  });
});
