// GitHub's workflows (.github/workflows/), read as GitHub reads them, and their `run:` steps run
// here as a runner runs them: each step's script in bash with the runner's options, in the
// repository's root, its `env:` filled from the secrets and variables the test hands in, and the
// runner's files for outputs and the summary. A step that fails stops the job, as on GitHub.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const WORKFLOWS = join(ROOT, ".github/workflows");

export interface Step {
  id?: string;
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  with?: Record<string, unknown>;
}

export interface Job {
  needs?: string | string[];
  if?: string;
  env?: Record<string, string>;
  outputs?: Record<string, string>;
  steps: Step[];
}

export interface Workflow {
  name: string;
  on: Record<string, unknown>;
  defaults?: { run?: { shell?: string } };
  jobs: Record<string, Job>;
}

/** The workflow files, by name (`test.yml`). */
export const workflowFiles = () => readdirSync(WORKFLOWS).filter((file) => /\.ya?ml$/.test(file));

export function readWorkflow(file: string): Workflow {
  return yaml.load(readFileSync(join(WORKFLOWS, file), "utf8")) as Workflow;
}

/** A job's steps after the one with this id (the set-up before it is GitHub's own). */
export function stepsAfter(job: Job, id: string): Step[] {
  const index = job.steps.findIndex((step) => step.id === id);
  if (index < 0) throw new Error(`no step with id "${id}"`);
  return job.steps.slice(index + 1);
}

/** What the expressions of a workflow's `env:` read: `${{ secrets.X }}`, `${{ vars.X }}`. */
export interface Context {
  secrets?: Record<string, string>;
  vars?: Record<string, string>;
}

/**
 * A step's (or job's) `env:` with its expressions filled from `context`, as GitHub fills them:
 * a secret or variable that is not set is empty. Any other expression is refused, so that a new
 * one cannot pass here unevaluated.
 */
export function resolveEnv(env: Record<string, string> = {}, context: Context = {}): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => {
      const expression = /^\$\{\{\s*(secrets|vars)\.(\w+)\s*\}\}$/.exec(value);
      if (expression) return [name, context[expression[1] as "secrets" | "vars"]?.[expression[2]!] ?? ""];
      if (value.includes("${{"))
        throw new Error(`${name}: an expression this test cannot evaluate: ${value}`);
      return [name, value];
    }),
  );
}

export interface StepsRun {
  /** The exit status of the last step that ran: the first that failed, or the last. */
  status: number | null;
  /** Everything the steps wrote, stdout and stderr, in order of arrival. */
  output: string;
  /** What they appended to $GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT. */
  summary: string;
  outputs: string;
}

/**
 * Runs `steps`' scripts one after another, as a runner with `shell: bash` does
 * (`bash --noprofile --norc -eo pipefail`), in the repository's root, with `baseEnv` under the
 * job's and each step's own `env:`. Stops at the first that fails.
 */
export async function runSteps(
  steps: Step[],
  {
    baseEnv,
    context = {},
    jobEnv = {},
  }: { baseEnv: NodeJS.ProcessEnv; context?: Context; jobEnv?: Record<string, string> },
): Promise<StepsRun> {
  const folder = mkdtempSync(join(tmpdir(), "workflow-steps-"));
  const files = {
    GITHUB_STEP_SUMMARY: join(folder, "summary.md"),
    GITHUB_OUTPUT: join(folder, "output"),
    GITHUB_ENV: join(folder, "env"),
  };
  for (const file of Object.values(files)) writeFileSync(file, "");
  let output = "";
  let status: number | null = 0;
  try {
    for (const [index, step] of steps.entries()) {
      if (step.run === undefined) throw new Error(`step ${step.name ?? index} has no run: it needs GitHub`);
      // A script reads what it needs from its environment; an expression inside it would be pasted
      // in as code (GitHub's "script injection").
      if (step.run.includes("${{")) throw new Error(`step ${step.name ?? index}: an expression inside run:`);
      const script = join(folder, `step-${index}.sh`);
      writeFileSync(script, step.run);
      const env = {
        ...baseEnv,
        CI: "true",
        GITHUB_ACTIONS: "true",
        RUNNER_TEMP: folder,
        ...files,
        ...resolveEnv(jobEnv, context),
        ...resolveEnv(step.env, context),
      };
      const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], { cwd: ROOT, env });
      child.stdout.on("data", (chunk: Buffer) => (output += chunk));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk));
      status = await new Promise((resolve) => child.on("close", resolve));
      if (status !== 0) break;
    }
    return {
      status,
      output,
      summary: readFileSync(files.GITHUB_STEP_SUMMARY, "utf8"),
      outputs: readFileSync(files.GITHUB_OUTPUT, "utf8"),
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
