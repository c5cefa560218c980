// `npm run deploy -- --github`: the owner's repository set up for GitHub's jobs (.github/workflows/)
// in one command, through GitHub's REST API with the owner's token. Call it as
//
//   await setUpGitHub({ root, given: givenSettings(root), asker, env: process.env, out })
//
// It resolves what it needs (settings.ts: the environment, .env.deploy, .env; asked on a terminal,
// else every missing one named in one SettingsError), then, in this order, so that the password
// never waits anywhere unprotected:
//   1. the environments `production` (the push: the token's user as required reviewer) and
//      `production-dry-run` (the dry run, which lists what is pending before anyone approves),
//      each limited to the default branch, where the plan allows it;
//   2. SUPABASE_DB_PUSH_URL as a secret of each environment, and the repository-level one, if an
//      earlier set-up left it, deleted (it would reach any branch); without environments (a free
//      private repository), a repository secret;
//   3. the secrets PUBLIC_SUPABASE_URL and SUPABASE_SECRET_KEY, and the variables
//      PUBLIC_SUPABASE_PUBLISHABLE_KEY, BACKUP_PUBLIC_KEY, and those given of SITE_URL, DIGEST_ISSUE,
//      PUBLISH_COUNTS and ALLOW_UNREVIEWED_PUSH.
// Each secret is sealed to the repository's or the environment's public key (sealed-box.ts), as
// GitHub requires; no secret is ever printed, only names. What it did and what it could not (and
// why, and what that means) goes to `out`, line by line; it returns the same as a GitHubSetUp. A
// refused token, a repository it cannot administer or an API that does not answer throws an
// OwnerFailure saying what to do.
//
// The token: GITHUB_TOKEN or GH_TOKEN, else `gh auth token` where the GitHub CLI is installed and
// logged in. The repository: GITHUB_REPOSITORY, else `git remote get-url origin`. GITHUB_API_URL
// (GitHub Enterprise, the tests' stand-in) is read from `env`, as GitHub's own tools read it.
import { spawnSync } from "node:child_process";
import { OwnerFailure } from "../../config/owner-failure.ts";
import { apiUrl, githubCall, ok, refused, said } from "../github/api.ts";
import { DEPLOY_COMMAND } from "../supabase-cli.ts";
import {
  createEnvironment,
  limitToBranch,
  readEnvironment,
  type EnvironmentHeld,
} from "../github/environments.ts";
import { seal } from "./sealed-box.ts";
import { resolveSettings, type Asker, type Setting } from "./settings.ts";

/** What the workflows name (.github/workflows/migrations.yml): the push's environment, then the dry run's. */
export const ENVIRONMENTS = [
  { name: "production", reviewed: true },
  { name: "production-dry-run", reviewed: false },
] as const;

const PASSWORD = "SUPABASE_DB_PUSH_URL";
const REPOSITORY_SECRETS = ["PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY"];
const VARIABLES = ["PUBLIC_SUPABASE_PUBLISHABLE_KEY", "BACKUP_PUBLIC_KEY"];
/** Set when given, never asked: each has a meaning when unset (README: GitHub's jobs). */
const OPTIONAL_VARIABLES = ["SITE_URL", "DIGEST_ISSUE", "PUBLISH_COUNTS", "ALLOW_UNREVIEWED_PUSH"];

const SETTINGS: Setting[] = [
  {
    name: "GITHUB_TOKEN",
    secret: true,
    where:
      "a fine-grained token for this repository with Administration, Environments, Secrets and Variables: " +
      "read and write, https://github.com/settings/personal-access-tokens; or GH_TOKEN, or `gh auth login`",
  },
  {
    name: "GITHUB_REPOSITORY",
    secret: false,
    where: "owner/name; read from `git remote get-url origin` when it is GitHub's",
    refuse: (value) => (/^[\w.-]+\/[\w.-]+$/.test(value) ? null : "not owner/name"),
  },
  { name: "PUBLIC_SUPABASE_URL", secret: false, where: "https://<project-ref>.supabase.co" },
  {
    name: "SUPABASE_SECRET_KEY",
    secret: true,
    where: "Project Settings → API Keys → Secret keys, sb_secret_…",
  },
  {
    name: "PUBLIC_SUPABASE_PUBLISHABLE_KEY",
    secret: false,
    where: "Project Settings → API Keys, sb_publishable_…",
  },
  {
    name: PASSWORD,
    secret: true,
    where: "the dashboard's Connect → Session pooler string, with the database's password",
    refuse: (value) => (/^postgres(ql)?:\/\//.test(value) ? null : "not a postgresql:// connection string"),
  },
  {
    name: "BACKUP_PUBLIC_KEY",
    secret: false,
    where: "your age public key, age1… (tools/sign-ups/README.md: An encrypted backup)",
    refuse: (value) => (value.startsWith("age1") ? null : "not an age public key (age1…)"),
  },
];

export interface GitHubSetUp {
  repository: string;
  visibility: "public" | "private";
  /** Environments as GitHub reads them back: their required reviewers, and the branches allowed (null: any). */
  environments: EnvironmentHeld[];
  /** Whether a push waits for a person's approval. */
  reviewed: boolean;
  /** Names set: `NAME` for the repository's, `environment/NAME` for an environment's. */
  secrets: string[];
  variables: string[];
  /** What could not be done, why, and what it means. */
  notes: string[];
}

export interface SetUpOptions {
  root: string;
  /** givenSettings(root): the environment over .env.deploy over .env. */
  given: Record<string, string>;
  /** Asks for what is missing; none without a terminal. */
  asker?: Asker;
  /** Where GITHUB_API_URL and `gh`'s and git's PATH are read. */
  env?: NodeJS.ProcessEnv;
  /** Each line of what it did. */
  out?: (line: string) => void;
}

/** What a command prints, or undefined when it is not there or fails. */
function output(command: string, args: string[], root: string, env: NodeJS.ProcessEnv): string | undefined {
  const run = spawnSync(command, args, { cwd: root, env, encoding: "utf8" });
  return run.status === 0 ? run.stdout.trim() || undefined : undefined;
}

/** `owner/name` from a GitHub remote's address (https or ssh), else undefined. */
export function repositoryOf(remote: string | undefined): string | undefined {
  return /github\.com[:/]([\w.-]+\/[\w.-]+?)(?:\.git)?\/?$/.exec(remote ?? "")?.[1];
}

export async function setUpGitHub({
  root,
  given,
  asker,
  env = process.env,
  out = (line) => console.error(line),
}: SetUpOptions): Promise<GitHubSetUp> {
  const found = {
    GITHUB_TOKEN: given.GITHUB_TOKEN ?? given.GH_TOKEN ?? output("gh", ["auth", "token"], root, env),
    GITHUB_REPOSITORY:
      given.GITHUB_REPOSITORY ?? repositoryOf(output("git", ["remote", "get-url", "origin"], root, env)),
  };
  const settings = await resolveSettings(SETTINGS, { ...given, ...definedOnly(found) }, { root, asker });
  const repository = settings.GITHUB_REPOSITORY!;
  const call = githubCall(apiUrl(env), settings.GITHUB_TOKEN!);

  const user = await call<{ login: string; id: number }>("GET", "/user");
  if (user.status === 401)
    throw new OwnerFailure(
      `GitHub refused the token (${said(user)}): it is wrong, expired or revoked. Make a new one (GITHUB_TOKEN: ` +
        `${SETTINGS[0]!.where}) and run this again.`,
      "GitHub token refused",
    );
  if (user.status !== 200) throw refused("GET", "/user", user);
  const repo = await call<{ private: boolean; default_branch: string; permissions?: { admin?: boolean } }>(
    "GET",
    `/repos/${repository}`,
  );
  if (repo.status === 404 || (repo.status === 200 && !repo.body.permissions?.admin))
    throw new OwnerFailure(
      `The token of ${user.body.login} cannot administer ${repository} (${repo.status === 404 ? "no such repository that it sees" : "no admin right"}): ` +
        "give the token this repository with Administration, Environments, Secrets and Variables: read and write.",
      "GitHub repository not reachable",
    );
  if (repo.status !== 200) throw refused("GET", `/repos/${repository}`, repo);
  const { default_branch: branch } = repo.body;
  const done: GitHubSetUp = {
    repository,
    visibility: repo.body.private ? "private" : "public",
    environments: [],
    reviewed: false,
    secrets: [],
    variables: [],
    notes: [],
  };
  const base = `/repos/${repository}`;

  for (const { name, reviewed } of ENVIRONMENTS) {
    const environment = await createEnvironment(call, base, name, reviewed ? user.body.id : undefined);
    if (environment === "none") {
      done.notes.push(
        `No environment: a private repository on GitHub Free has none (GitHub Pro or Team gives branch rules, ` +
          `a public repository or GitHub Enterprise required reviewers). ${PASSWORD} is therefore a repository ` +
          `secret, which a workflow on any branch could read, and no push can wait for an approval.`,
      );
      break;
    }
    if (environment === "unreviewed")
      done.notes.push(
        `No required reviewer on ${name}: GitHub refused one (a private repository has them only on GitHub Enterprise, GitHub's docs, ` +
          `"Managing environments for deployment"). Its branch rule holds: ${branch} only.`,
      );
    await limitToBranch(call, base, name, branch);
    done.environments.push((await readEnvironment(call, base, name))!);
  }
  done.reviewed = (done.environments[0]?.reviewers.length ?? 0) > 0;

  const putSecret = async (scope: string, name: string, value: string) => {
    const key = await ok<{ key_id: string; key: string }>(call, "GET", `${base}${scope}/secrets/public-key`);
    await ok(call, "PUT", `${base}${scope}/secrets/${name}`, {
      encrypted_value: seal(value, key.key),
      key_id: key.key_id,
    });
  };
  if (done.environments.length > 0) {
    for (const { name } of done.environments) {
      await putSecret(`/environments/${name}`, PASSWORD, settings[PASSWORD]!);
      done.secrets.push(`${name}/${PASSWORD}`);
    }
    const earlier = await call("DELETE", `${base}/actions/secrets/${PASSWORD}`);
    if (earlier.status !== 204 && earlier.status !== 404)
      throw refused("DELETE", `${base}/actions/secrets/${PASSWORD}`, earlier);
    if (earlier.status === 204)
      done.notes.push(
        `Deleted the repository secret ${PASSWORD}: it reached every branch; the environments hold it now.`,
      );
  }
  for (const name of done.environments.length > 0 ? REPOSITORY_SECRETS : [...REPOSITORY_SECRETS, PASSWORD]) {
    await putSecret("/actions", name, settings[name]!);
    done.secrets.push(name);
  }
  for (const name of [...VARIABLES, ...OPTIONAL_VARIABLES]) {
    const value = settings[name] ?? given[name];
    if (value === undefined) continue;
    const updated = await call("PATCH", `${base}/actions/variables/${name}`, { name, value });
    if (updated.status === 404) await ok(call, "POST", `${base}/actions/variables`, { name, value });
    else if (updated.status !== 204) throw refused("PATCH", `${base}/actions/variables/${name}`, updated);
    done.variables.push(name);
  }

  if (!done.reviewed)
    done.notes.push(
      given.ALLOW_UNREVIEWED_PUSH === "true"
        ? "Pushes run unreviewed, as ALLOW_UNREVIEWED_PUSH=true asks: a commit on the default branch applies its migrations once the tests pass."
        : "The migrations' job pushes nothing until a person can approve: set ALLOW_UNREVIEWED_PUSH=true and run this " +
            `again to let it push unreviewed, or push them yourself (${DEPLOY_COMMAND}).`,
    );
  if (done.visibility === "public" && given.PUBLISH_COUNTS !== "true")
    done.notes.push(
      "A public repository: anyone can read its runs' summaries, so they say whether the project and the site are " +
        "well, never the counts (PUBLISH_COUNTS=true shows them).",
    );
  report(done, user.body.login, out);
  return done;
}

function report(done: GitHubSetUp, login: string, out: (line: string) => void) {
  out(`GitHub: ${done.repository} (${done.visibility}), as ${login}`);
  for (const { name, reviewers, branches } of done.environments)
    out(
      `  environment ${name}: ${reviewers.length > 0 ? `approved by ${reviewers.join(", ")}` : "no reviewer"}, ` +
        `${branches ? `branches ${branches.join(", ")}` : "any branch"}`,
    );
  out(`  secrets: ${done.secrets.join(", ")}`);
  out(`  variables: ${done.variables.join(", ")}`);
  for (const note of done.notes) out(`  note: ${note}`);
}

const definedOnly = (values: Record<string, string | undefined>) =>
  Object.fromEntries(
    Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
