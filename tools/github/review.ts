// `node tools/github/review.ts`, the first step of the migrations' workflow after the branch's: whether
// a push may go ahead. Before any step holds the database's password, it reads the `production`
// environment's protection rules with the job's token (GitHub: a workflow that names an environment
// that does not exist creates it, without any rule): with a required reviewer, each push waits for
// that person's approval; without one, it pushes only when the owner has set the repository
// variable ALLOW_UNREVIEWED_PUSH to `true` (the only way in a private repository, where GitHub
// offers required reviewers on Enterprise alone), and otherwise fails naming both ways. A copy that
// is not set up (no environment, no repository secret) stays green, with a notice.
//
// Reads ALLOW_UNREVIEWED_PUSH, PASSWORD_IN_REPOSITORY (`true` when the repository, outside any
// environment, holds SUPABASE_DB_PUSH_URL: whether it is set, never its value) and what a runner
// sets: GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_TOKEN (the job's, with `actions: read`),
// GITHUB_OUTPUT, GITHUB_STEP_SUMMARY. Its output `push` is `reviewed`, `unreviewed`, or empty.
import { appendFileSync } from "node:fs";
import { OwnerFailure } from "../../config/owner-failure.ts";
import { report, reportFailure, type Kind } from "./annotations.ts";
import { apiUrl, githubCall } from "./api.ts";
import { readEnvironment, type EnvironmentHeld } from "./environments.ts";

const ENVIRONMENT = "production";

interface Verdict {
  push: "reviewed" | "unreviewed" | "";
  said: { kind: Kind; title: string; message: string };
}

const BOTH_WAYS =
  "Either give it a required reviewer (`npm run deploy -- --github` does, or Settings → Environments → " +
  `${ENVIRONMENT} → Required reviewers: on a public repository, or GitHub Enterprise), or, to push without ` +
  "anyone approving (the only way in a private repository on GitHub Free, Pro or Team), set the repository " +
  "variable ALLOW_UNREVIEWED_PUSH to true (README: GitHub's jobs).";

/** What a push lacks: the environment, or its reviewer. */
const lacking = (environment: EnvironmentHeld | null) =>
  environment
    ? `The \`${ENVIRONMENT}\` environment has no required reviewer`
    : `There is no \`${ENVIRONMENT}\` environment`;

/** What the environment (null: none) and the settings make of a push. */
function verdict(
  environment: EnvironmentHeld | null,
  { passwordInRepository, allowUnreviewed }: { passwordInRepository: boolean; allowUnreviewed: boolean },
): Verdict {
  if (environment === null && !passwordInRepository)
    return {
      push: "",
      said: {
        kind: "notice",
        title: "Migrations not set up",
        message:
          "Run `npm run deploy -- --github` to turn it on: it makes the `production` environment and puts " +
          "SUPABASE_DB_PUSH_URL in it (README: GitHub's jobs).",
      },
    };
  if (environment && environment.reviewers.length > 0)
    return {
      push: "reviewed",
      said: {
        kind: "notice",
        title: "Push reviewed",
        message: `Each push waits for the approval of ${environment.reviewers.join(" or ")} (the \`${ENVIRONMENT}\` environment).`,
      },
    };
  if (allowUnreviewed)
    return {
      push: "unreviewed",
      said: {
        kind: "notice",
        title: "Push unreviewed",
        message: `${lacking(environment)}, and ALLOW_UNREVIEWED_PUSH is true: the tested migrations are pushed without anyone approving.`,
      },
    };
  return {
    push: "",
    said: {
      kind: "error",
      title: "Push without a reviewer",
      message: `${lacking(environment)}, so a push would apply migrations that nobody approved: nothing pushed. ${BOTH_WAYS}`,
    },
  };
}

if (import.meta.main) {
  try {
    const env = process.env;
    const repository = env.GITHUB_REPOSITORY;
    if (!repository || !env.GITHUB_TOKEN)
      throw new OwnerFailure(
        "GITHUB_REPOSITORY and GITHUB_TOKEN: this runs as a step of a GitHub Actions job.",
        "Not on GitHub",
      );
    const call = githubCall(apiUrl(env), env.GITHUB_TOKEN);
    const environment = await readEnvironment(call, `/repos/${repository}`, ENVIRONMENT);
    const { push, said } = verdict(environment, {
      passwordInRepository: env.PASSWORD_IN_REPOSITORY === "true",
      allowUnreviewed: env.ALLOW_UNREVIEWED_PUSH === "true",
    });
    if (env.GITHUB_OUTPUT) appendFileSync(env.GITHUB_OUTPUT, `push=${push}\n`);
    // A reviewed push is the normal case: the summary says so, no annotation.
    if (push === "reviewed" && env.GITHUB_STEP_SUMMARY)
      appendFileSync(env.GITHUB_STEP_SUMMARY, `${said.message}\n`);
    else report(said.kind, said.message, said.title);
    if (said.kind === "error") process.exitCode = 1;
  } catch (error) {
    const { message, title } =
      error instanceof OwnerFailure ? error : { message: String(error), title: "Review unknown" };
    reportFailure(message, title);
    process.exitCode = 1;
  }
}
