// `node tools/github/inactivity.ts check|days-left`: GitHub's 60-day rule, as it stands for this
// repository. GitHub stops a public repository's scheduled workflows after 60 days without
// activity in it (GitHub's docs, "Disabling and enabling a workflow"), the daily watch among them,
// and a Free project then pauses unwatched a week later. Nothing here works around the rule: it
// tells the owner in time. `check`, a step of the daily watch, fails from day 50 without a commit
// on the default branch, naming the date the schedules stop and the one thing to do (GitHub mails
// a failed scheduled run); before day 50, and in a private repository (which has no such rule), it
// passes with that date in the run's summary. `days-left` prints the line alone, for the week's
// digest.
//
// GitHub does not define "activity"; the default branch's last commit (its committer date) is the
// earliest it can have been, so the date named here is never later than GitHub's. Enabling a
// stopped workflow is activity to GitHub but not here: the failure asks for a commit (an empty one
// will do), which both count.
//
// Reads what a runner sets: GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_WORKFLOW (the workflow's
// name), GITHUB_STEP_SUMMARY, and GITHUB_TOKEN, the job's token, which reads the repository and
// its commits with `contents: read`.
import { appendFileSync } from "node:fs";
import { OwnerFailure } from "../../config/owner-failure.ts";
import { reportFailure } from "./annotations.ts";
import { apiUrl, githubCall, ok } from "./api.ts";

/** From this many days without a commit, the daily run fails: GitHub's rule strikes at 60. */
const FAILING_FROM_DAY = 50;
const RULE_DAYS = 60;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The repository as the rule sees it. */
interface Standing {
  branch: string;
  private: boolean;
  /** Whole days since the default branch's last commit. */
  days: number;
  /** The date (UTC) the schedules stop, and how many calendar days from today. */
  stops: string;
  daysLeft: number;
}

async function standing(env: NodeJS.ProcessEnv, now: Date): Promise<Standing> {
  const repository = required(env, "GITHUB_REPOSITORY");
  const call = githubCall(apiUrl(env), required(env, "GITHUB_TOKEN"));
  const get = (path: string) => ok(call, "GET", `/repos/${repository}${path}`);
  const repo = (await get("")) as { private: boolean; default_branch: string };
  const branch = repo.default_branch;
  const latest = (await get(`/commits/${encodeURIComponent(branch)}`)) as {
    commit: { committer: { date: string } };
  };
  const committed = new Date(latest.commit.committer.date);
  const stops = new Date(committed.getTime() + RULE_DAYS * DAY_MS).toISOString().slice(0, 10);
  const today = now.toISOString().slice(0, 10);
  return {
    branch,
    private: repo.private,
    days: Math.floor((now.getTime() - committed.getTime()) / DAY_MS),
    stops,
    daysLeft: Math.round((Date.parse(stops) - Date.parse(today)) / DAY_MS),
  };
}

const inDays = (days: number) =>
  days > 1 ? `in ${days} days` : days === 1 ? "tomorrow" : days === 0 ? "today" : `${-days} days ago`;

/** The line for the run's summary and the digest. */
function line(state: Standing): string {
  if (state.private)
    return `A private repository: GitHub does not stop its schedules for inactivity (the last commit on ${state.branch} is ${state.days} days old).`;
  return (
    `GitHub stops this repository's schedules after ${RULE_DAYS} days without activity: on ${state.stops} ` +
    `(${inDays(state.daysLeft)}), unless a commit comes to ${state.branch} before.`
  );
}

/**
 * The one command that makes the next run green, as the failure and the READMEs give it: a commit
 * (empty is enough) on the default branch, which this check counts from. Enabling a stopped
 * workflow does not change the last commit, so the check would fail on every run after it.
 */
export const KEEP_GOING = 'git commit --allow-empty -m "Keep the schedules running" && git push';

/** From day 50 in a public repository: what fails the daily run. */
function warning(state: Standing, workflow: string): { title: string; message: string } | null {
  if (state.private || state.days < FAILING_FROM_DAY) return null;
  return {
    title: `Schedules stop on ${state.stops}`,
    message:
      `No commit on ${state.branch} for ${state.days} days: GitHub stops a public repository's schedules after ` +
      `${RULE_DAYS} days without activity, this one's on ${state.stops} (${inDays(state.daysLeft)}). Push any commit ` +
      `to ${state.branch}, an empty one will do (\`${KEEP_GOING}\`). Once stopped, also enable the workflow again ` +
      `under Actions → ${workflow} → Enable workflow: enabling alone leaves this check failing, as it counts from ` +
      "the last commit.",
  };
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value)
    throw new OwnerFailure(
      `${name} is not set: this runs as a step of a GitHub Actions job.`,
      "Not on GitHub",
    );
  return value;
}

if (import.meta.main) {
  const verb = process.argv[2];
  if (verb !== "check" && verb !== "days-left") {
    process.stderr.write("usage: node tools/github/inactivity.ts check|days-left\n");
    process.exit(2);
  }
  try {
    const state = await standing(process.env, new Date());
    process.stdout.write(`${line(state)}\n`);
    if (verb === "check") {
      if (process.env.GITHUB_STEP_SUMMARY)
        appendFileSync(process.env.GITHUB_STEP_SUMMARY, `\n${line(state)}\n`);
      const failing = warning(state, process.env.GITHUB_WORKFLOW || "the workflow");
      if (failing) {
        reportFailure(failing.message, failing.title);
        process.exitCode = 1;
      }
    }
  } catch (error) {
    const { message, title } =
      error instanceof OwnerFailure ? error : { message: String(error), title: "Inactivity check failed" };
    reportFailure(message, title);
    process.exitCode = 1;
  }
}
