// GitHub's workflows (.github/workflows/), read as GitHub reads them, and their `run:` steps run
// here as a runner runs them: each step's script in bash with the runner's options, in the
// repository's root, its `env:` filled from the secrets and variables the test hands in, and the
// runner's files for outputs and the summary. Each step's and job's `if:` is evaluated as GitHub
// evaluates it (expressions.ts): a step that fails stops the job, but for the steps whose `if:`
// runs them after a failure.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";
import { withoutTestEnvironment } from "../test-environment.ts";
import { asString, evaluate, runs, type Contexts } from "./expressions.ts";

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
  permissions?: Record<string, string>;
  defaults?: { run?: { shell?: string } };
  jobs: Record<string, Job>;
}

/** The workflow files, by name (`test.yml`). */
export const workflowFiles = () => readdirSync(WORKFLOWS).filter((file) => /\.ya?ml$/.test(file));

export function readWorkflow(file: string): Workflow {
  return yaml.load(readFileSync(join(WORKFLOWS, file), "utf8")) as Workflow;
}

/** The repository the tests' runs belong to. */
export const REPOSITORY = "owner/future-awaits";

/**
 * A runner's environment for `workflow`'s steps: what GitHub sets for a run, and none of the
 * project's settings but those the steps set, so that a developer's .env counts for nothing (empty
 * is unset, and wins over .env); no local Supabase keeps data (in `scratch`), and `extra` on top.
 */
export const runnerEnv = (workflow: Workflow, scratch: string, extra: Record<string, string> = {}) => ({
  ...withoutTestEnvironment(process.env),
  PUBLIC_SUPABASE_URL: "",
  PUBLIC_SUPABASE_PUBLISHABLE_KEY: "",
  SUPABASE_SECRET_KEY: "",
  SITE_URL: "",
  BACKUP_PUBLIC_KEY: "",
  SUPABASE_API_PORT: "",
  SUPABASE_DATA_DIR: join(scratch, "untouched"),
  SUPABASE_DB_URL: "",
  SUPABASE_SEED_FILE: "",
  SIGN_UPS_NOW: "",
  TZ: "UTC",
  GITHUB_REPOSITORY: REPOSITORY,
  GITHUB_WORKFLOW: workflow.name,
  ...extra,
});

/**
 * A job's `run:` steps, as the tests run them: in this repository, whose packages are installed
 * already, so without its install (`id: install`); GitHub's own actions (checkout, setup-node,
 * upload-artifact) are GitHub's, and the tests look at their settings instead.
 */
export const ownSteps = (job: Job): Step[] =>
  job.steps.filter((step) => step.run !== undefined && step.id !== "install");

/** What a workflow's expressions read: `${{ secrets.X }}`, `${{ vars.X }}`, `${{ github.x.y }}`, `needs.<job>.outputs.<name>`. */
export interface Context {
  secrets?: Record<string, string>;
  vars?: Record<string, string>;
  /** `github.token`, `github.event_name`, `github.event.workflow_run.head_sha`… */
  github?: Record<string, unknown>;
  /** The jobs this one needs: `{ pending: { outputs: { migrations: "…" } } }`. */
  needs?: Record<string, { outputs: Record<string, string> }>;
}

/** The contexts an expression may read, from the test's and the steps' run so far. */
const contextsOf = (context: Context, steps: Contexts["steps"] = {}): Contexts => ({
  secrets: context.secrets ?? {},
  vars: context.vars ?? {},
  github: context.github ?? {},
  needs: context.needs ?? {},
  steps,
});

/**
 * A step's (or job's) `env:` with its expressions filled from `context`, as GitHub fills them:
 * a secret or variable that is not set is empty, and `a || b` is the first that is not. A value
 * with an expression inside other text is refused, as none of ours has one.
 */
export function resolveEnv(env: Record<string, string> = {}, context: Context = {}): Record<string, string> {
  const contexts = contextsOf(context);
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => {
      const text = String(value);
      if (/^\$\{\{[\s\S]*\}\}$/.test(text)) return [name, asString(evaluate(text, contexts))];
      if (text.includes("${{")) throw new Error(`${name}: an expression this test cannot evaluate: ${text}`);
      return [name, text];
    }),
  );
}

/** A step's outputs as GitHub reads its $GITHUB_OUTPUT: `name=value` lines and `name<<END` … `END` blocks. */
function parseOutputs(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const block = /^([^=<]+)<<(.+)$/.exec(line);
    if (block) {
      const end = lines.indexOf(block[2]!, index + 1);
      if (end < 0) throw new Error(`$GITHUB_OUTPUT: ${block[1]}'s block has no ${block[2]}`);
      outputs[block[1]!] = lines.slice(index + 1, end).join("\n");
      index = end;
    } else if (line.includes("=")) {
      outputs[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
    } else if (line !== "") throw new Error(`$GITHUB_OUTPUT: a line GitHub would refuse: ${line}`);
  }
  return outputs;
}

export interface StepsRun {
  /** The job's: the first failed step's exit status, or 0. */
  status: number | null;
  /** Everything the steps wrote, stdout and stderr, in order of arrival. */
  output: string;
  /** What they appended to $GITHUB_STEP_SUMMARY, and each one's $GITHUB_OUTPUT, one after another. */
  summary: string;
  outputs: string;
  /** By step id, as `steps.<id>` reads it: its outcome (`success`, `failure`, `skipped`) and its outputs. */
  steps: Record<string, { outcome: string; outputs: Record<string, string> }>;
}

/**
 * Runs `steps`' scripts one after another, as a runner with `shell: bash` does
 * (`bash --noprofile --norc -eo pipefail`), in the repository's root, with `baseEnv` under the
 * job's and each step's own `env:`. Each step runs as its `if:` says (none: only while no step
 * has failed), which reads the outputs of the steps before it; the job's status is the first
 * failure's.
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
    GITHUB_ENV: join(folder, "env"),
  };
  for (const file of Object.values(files)) writeFileSync(file, "");
  let output = "";
  let outputs = "";
  let status: number | null = 0;
  const ran: StepsRun["steps"] = {};
  try {
    for (const [index, step] of steps.entries()) {
      const name = step.name ?? step.id ?? String(index);
      if (!runs(step.if, contextsOf(context, ran), { failed: status !== 0 })) {
        if (step.id) ran[step.id] = { outcome: "skipped", outputs: {} };
        continue;
      }
      if (step.run === undefined) throw new Error(`step ${name} has no run: it needs GitHub`);
      // A script reads what it needs from its environment; an expression inside it would be pasted
      // in as code (GitHub's "script injection").
      if (step.run.includes("${{")) throw new Error(`step ${name}: an expression inside run:`);
      const script = join(folder, `step-${index}.sh`);
      writeFileSync(script, step.run);
      // GitHub gives each step an outputs file of its own.
      const outputFile = join(folder, `output-${index}`);
      writeFileSync(outputFile, "");
      const env = {
        ...baseEnv,
        CI: "true",
        GITHUB_ACTIONS: "true",
        RUNNER_TEMP: folder,
        ...files,
        GITHUB_OUTPUT: outputFile,
        ...resolveEnv(jobEnv, context),
        ...resolveEnv(step.env, context),
      };
      const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], { cwd, env });
      child.stdout.on("data", (chunk: Buffer) => (output += chunk));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk));
      const stepStatus = await new Promise<number | null>((resolve) => child.on("close", resolve));
      if (status === 0) status = stepStatus;
      const written = readFileSync(outputFile, "utf8");
      outputs += written;
      if (step.id)
        ran[step.id] = { outcome: stepStatus === 0 ? "success" : "failure", outputs: parseOutputs(written) };
    }
    return { status, output, summary: readFileSync(files.GITHUB_STEP_SUMMARY, "utf8"), outputs, steps: ran };
  } finally {
    if (runnerTemp === undefined) rmSync(folder, { recursive: true, force: true });
  }
}
