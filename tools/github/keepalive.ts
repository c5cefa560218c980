// `npm run keepalive`, a step of the daily watch (.github/workflows/watch.yml): keeps the running
// workflow enabled past GitHub's 60-day rule. GitHub disables a public repository's scheduled
// workflows after 60 days without activity in it; the owner who is away would not re-enable the
// watch, and a week later a Free project pauses. So each run enables its own workflow through
// GitHub's API (PUT /repos/{owner}/{repo}/actions/workflows/{file}/enable, which needs the job's
// `permissions: actions: write`), as keepalive-workflow and gh-workflow-keepalive do, and says
// from day 50 without a commit that the rule is near. A private repository has no such rule.
//
// Reads what a runner sets: GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_WORKFLOW_REF, GITHUB_TOKEN
// (the job's token, given by the step) and GITHUB_STEP_SUMMARY.
import { appendFileSync } from "node:fs";
import { OwnerFailure } from "../../config/owner-failure.ts";
import { ownerLine, reportFailure } from "./annotations.ts";

/** From this many days without a commit, the summary warns: GitHub's rule strikes at 60. */
export const WARNING_DAYS = 50;

const DAY_MS = 24 * 60 * 60 * 1000;

export interface KeepaliveResult {
  workflow: string;
  private: boolean;
  /** Whole days since the default branch's last commit. */
  daysSinceCommit: number;
  /** Each line for the run's summary, and each warning to annotate. */
  summary: string;
  warning: { title: string; message: string } | null;
}

/** Keeps the running workflow enabled; what to tell the owner. */
export async function keepalive(env: NodeJS.ProcessEnv, now: Date): Promise<KeepaliveResult> {
  const api = (env.GITHUB_API_URL || "https://api.github.com").replace(/\/$/, "");
  const repository = required(env, "GITHUB_REPOSITORY");
  // owner/repo/.github/workflows/watch.yml@refs/heads/main → watch.yml: the API takes a file name for an id.
  const workflow = required(env, "GITHUB_WORKFLOW_REF").replace(/@.*$/, "").split("/").at(-1)!;
  const token = required(env, "GITHUB_TOKEN");
  const call = async (method: string, path: string) => {
    const response = await fetch(`${api}/repos/${repository}${path}`, {
      method,
      headers: {
        accept: "application/vnd.github+json",
        authorization: `Bearer ${token}`,
        "x-github-api-version": "2022-11-28",
        "user-agent": "future-awaits-keepalive",
      },
      signal: AbortSignal.timeout(30_000),
    }).catch((error: Error) => {
      throw new OwnerFailure(
        `Cannot reach GitHub's API at ${api} (${String(error.cause ?? error.message)}).`,
        "Keepalive failed",
      );
    });
    if (!response.ok) {
      const body = await response.text();
      const message = (/"message"\s*:\s*"([^"]*)"/.exec(body)?.[1] ?? body).slice(0, 200);
      throw new OwnerFailure(
        `GitHub's API answered ${method} ${path} with ${response.status} (${message})` +
          (response.status === 403 || response.status === 404
            ? ": the job needs `permissions: actions: write` to keep its workflow enabled (watch.yml has it)."
            : "."),
        "Keepalive failed",
      );
    }
    return response.status === 204 ? null : ((await response.json()) as unknown);
  };

  await call("PUT", `/actions/workflows/${workflow}/enable`);
  const repo = (await call("GET", "")) as { private: boolean; default_branch: string };
  const [latest] = (await call(
    "GET",
    `/commits?sha=${encodeURIComponent(repo.default_branch)}&per_page=1`,
  )) as Array<{
    commit: { committer: { date: string } };
  }>;
  const committed = new Date(latest!.commit.committer.date);
  const days = Math.floor((now.getTime() - committed.getTime()) / DAY_MS);
  const since = `the last commit on ${repo.default_branch} is ${days} ${days === 1 ? "day" : "days"} old`;
  if (repo.private) {
    return {
      workflow,
      private: true,
      daysSinceCommit: days,
      summary: `Kept ${workflow} enabled through GitHub's API; ${since}, and a private repository has no 60-day rule.`,
      warning: null,
    };
  }
  const warning =
    days >= WARNING_DAYS
      ? {
          title: `No commit for ${days} days`,
          message:
            `No commit on ${repo.default_branch} for ${days} days: GitHub disables a public repository's scheduled ` +
            `workflows after 60 days without activity. This run re-enabled ${workflow} through GitHub's API; should ` +
            "GitHub disable it anyway, enable it again under Actions, or push a commit.",
        }
      : null;
  return {
    workflow,
    private: false,
    daysSinceCommit: days,
    summary:
      `Kept ${workflow} enabled through GitHub's API; ${since} (GitHub disables a public repository's schedules ` +
      "after 60 days without activity).",
    warning,
  };
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value)
    throw new OwnerFailure(
      `${name} is not set: this runs as a step of a GitHub Actions job.`,
      "Keepalive failed",
    );
  return value;
}

if (import.meta.main) {
  const summaryFile = process.env.GITHUB_STEP_SUMMARY;
  const summarize = (text: string) => summaryFile && appendFileSync(summaryFile, `${text}\n`);
  try {
    const { summary, warning } = await keepalive(process.env, new Date());
    summarize(`\n${summary}`);
    process.stdout.write(`${summary}\n`);
    if (warning) {
      process.stderr.write(`${ownerLine("warning", warning.message, warning.title)}\n`);
      summarize(`\n**Warning**: ${warning.message}`);
    }
  } catch (error) {
    const { message, title } =
      error instanceof OwnerFailure ? error : { message: String(error), title: "Keepalive failed" };
    reportFailure(message, title);
    process.exitCode = 1;
  }
}
