// GitHub's workflows (.github/workflows/), read as GitHub reads them, and their `run:` steps run
// here as a runner runs them: each step's script in bash with the runner's options, in the
// repository's root, its `env:` filled from the secrets and variables the test hands in, and the
// runner's files for outputs and the summary. A step that fails stops the job, as on GitHub, but
// for the steps whose `if:` runs them after a failure.
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
  permissions?: Record<string, string>;
  environment?: string;
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

/** What the expressions of a workflow's `env:` read: `${{ secrets.X }}`, `${{ vars.X }}`, `${{ github.x.y }}`. */
export interface Context {
  secrets?: Record<string, string>;
  vars?: Record<string, string>;
  /** `github.token`, `github.event_name`, `github.event.workflow_run.head_sha`… */
  github?: Record<string, unknown>;
}

/** An operand: a context's property, by its dotted path. */
const OPERAND = /^(secrets|vars|github)((?:\.\w+)+)$/;

/**
 * A step's (or job's) `env:` with its expressions filled from `context`, as GitHub fills them:
 * a secret or variable that is not set is empty, and `a || b` is the first that is not. Any other
 * expression is refused, so that a new one cannot pass here unevaluated.
 */
export function resolveEnv(env: Record<string, string> = {}, context: Context = {}): Record<string, string> {
  const evaluate = (operand: string, name: string): string => {
    const match = OPERAND.exec(operand.trim());
    if (!match) throw new Error(`${name}: an expression this test cannot evaluate: ${operand}`);
    let value: unknown = context[match[1] as keyof Context];
    for (const key of match[2]!.slice(1).split("."))
      value = (value as Record<string, unknown> | undefined)?.[key];
    return value === undefined || value === null ? "" : String(value);
  };
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => {
      const expression = /^\$\{\{(.*)\}\}$/.exec(value);
      if (expression) {
        const operands = expression[1]!.split("||").map((operand) => evaluate(operand, name));
        return [name, operands.find((operand) => operand !== "") ?? ""];
      }
      if (String(value).includes("${{"))
        throw new Error(`${name}: an expression this test cannot evaluate: ${value}`);
      return [name, value];
    }),
  );
}

/** Whether a step runs after an earlier one failed: `if: ${{ !cancelled() }}`, `always()`, `failure()`. */
const runsAfterFailure = (step: Step) => /!cancelled\(\)|always\(\)|failure\(\)/.test(step.if ?? "");

export interface StepsRun {
  /** The job's: the first failed step's exit status, or 0. */
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
    runnerTemp,
    cwd = ROOT,
  }: {
    baseEnv: NodeJS.ProcessEnv;
    context?: Context;
    jobEnv?: Record<string, string>;
    /** The runner's temporary folder, kept for the test to look into; else one removed at the end. */
    runnerTemp?: string;
    /** The checkout the steps run in: the repository's root unless told. */
    cwd?: string;
  },
): Promise<StepsRun> {
  const folder = runnerTemp ?? mkdtempSync(join(tmpdir(), "workflow-steps-"));
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
      // After a failure, only the steps that say they run then; the job's status stays the failure's.
      if (status !== 0 && !runsAfterFailure(step)) continue;
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
      const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], { cwd, env });
      child.stdout.on("data", (chunk: Buffer) => (output += chunk));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk));
      const stepStatus = await new Promise<number | null>((resolve) => child.on("close", resolve));
      if (status === 0) status = stepStatus;
    }
    return {
      status,
      output,
      summary: readFileSync(files.GITHUB_STEP_SUMMARY, "utf8"),
      outputs: readFileSync(files.GITHUB_OUTPUT, "utf8"),
    };
  } finally {
    if (runnerTemp === undefined) rmSync(folder, { recursive: true, force: true });
  }
}
