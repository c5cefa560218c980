// The deploy's Supabase project, through the pinned CLI (tools/supabase-cli.ts) and the page's own
// path: the publishable key fetched with an access token (`projects api-keys`), the migrations the
// project lacks (`db push --remote=<url> --dry-run`, as GitHub's migrations job asks), their push,
// and the page's sign-up path tried as the watch tries it (tools/sign-ups/probe.ts): an address
// the database refuses, so that nothing is stored.
//
// The connection string holds the database's password: nothing the CLI prints is shown or thrown
// before `masked` has taken it out.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@supabase/supabase-js";
import { isSecretKey } from "../../config/environment.ts";
import { OwnerFailure } from "../../config/owner-failure.ts";
import { checkSignUpPath, REFUSED_ADDRESS } from "../sign-ups/probe.ts";
import { runSupabase } from "../supabase-cli.ts";

/** A failure of the project's step: nothing was uploaded. */
export class ProjectError extends OwnerFailure {}

/** `text` without the connection string, its password, or its user and password together. */
export function masked(text: string, connection: string): string {
  let url: URL | null = null;
  try {
    url = new URL(connection);
  } catch {
    // Not a URL: only the string itself is hidden.
  }
  const password = url?.password ? decodeURIComponent(url.password) : "";
  const secrets = [connection, url?.password ?? "", password].filter((secret) => secret.length >= 4);
  return secrets.reduce((out, secret) => out.split(secret).join("***"), text);
}

/** The repository's migrations, by file name, in order. */
export function repositoryMigrations(root: string): string[] {
  return readdirSync(join(root, "supabase", "migrations"))
    .filter((file) => /^\d+_.+\.sql$/.test(file))
    .sort();
}

/** The migrations a dry run's output names, in their order, from the files there are. */
export function namedMigrations(output: string, files: string[]): string[] {
  const words = new Set(output.split(/\s+/));
  return files.filter((file) => words.has(file));
}

/** The CLI's run against the database, its output masked; a failure says what to do. */
function cli(root: string, args: string[], dbUrl: string, env: NodeJS.ProcessEnv): string {
  const { status, stdout, stderr } = runSupabase([...args, `--remote=${dbUrl}`], { cwd: root, env });
  const output = masked(`${stdout}${stderr}`, dbUrl);
  if (status === 0) return output;
  throw new ProjectError(databaseFailure(output), "Database refused");
}

/** What a failed `db push` means for the owner, from the CLI's own words. */
export function databaseFailure(output: string): string {
  const why = output.trim().split("\n").slice(-3).join(" ");
  if (/password authentication failed|SASL auth|invalid password/i.test(output))
    return (
      `The database refused the password in SUPABASE_DB_PUSH_URL (${why}). Copy the connection string again ` +
      "(the dashboard's Connect → Session pooler) with the database's password; a forgotten one is reset in " +
      "Project Settings → Database."
    );
  if (/connection refused|no such host|timeout|i\/o timeout|network is unreachable|ENOTFOUND/i.test(output))
    return (
      `The database at SUPABASE_DB_PUSH_URL does not answer (${why}). Check the string (the dashboard's ` +
      "Connect → Session pooler: the pooler's host and port 5432), the network, and that the project is not paused."
    );
  return `The Supabase CLI failed on the database at SUPABASE_DB_PUSH_URL: ${why}`;
}

/** The repository's migrations the project lacks, as the CLI's dry run lists them. */
export function pendingMigrations(root: string, dbUrl: string, env: NodeJS.ProcessEnv): string[] {
  const output = cli(root, ["db", "push", "--dry-run"], dbUrl, env);
  const pending = namedMigrations(output, repositoryMigrations(root));
  if (pending.length === 0 && !/\bup to date\b/i.test(output))
    throw new ProjectError(
      `The Supabase CLI's dry run did not say which migrations the project lacks: ${output.trim().split("\n").slice(-3).join(" ")}`,
      "Migrations unknown",
    );
  return pending;
}

/** Applies every migration the project lacks. */
export function pushMigrations(root: string, dbUrl: string, env: NodeJS.ProcessEnv): void {
  cli(root, ["db", "push", "--yes"], dbUrl, env);
}

/**
 * The project's publishable key, fetched with the owner's access token (SUPABASE_ACCESS_TOKEN in
 * `env`) by the CLI's `projects api-keys`: the one whose type is `publishable`.
 */
export function fetchPublishableKey(root: string, ref: string, env: NodeJS.ProcessEnv): string {
  const { status, stdout, stderr } = runSupabase(["projects", "api-keys", `--remote=${ref}`, "-o", "json"], {
    cwd: root,
    env,
  });
  let keys: Array<{ api_key?: string; type?: string }> = [];
  try {
    if (status === 0) keys = JSON.parse(stdout);
  } catch {
    // Said below, as any other failure.
  }
  const key = keys.find((entry) => entry.type === "publishable")?.api_key;
  if (key) return key;
  const why = `${stdout}${stderr}`.trim().split("\n").slice(-2).join(" ");
  throw new ProjectError(
    `Could not fetch the publishable key of project ${ref} with SUPABASE_ACCESS_TOKEN (${why || "no publishable key"}). ` +
      "Check the token (supabase.com/dashboard/account/tokens) and the project's ref (Project Settings → General), " +
      "or set PUBLIC_SUPABASE_PUBLISHABLE_KEY (Project Settings → API Keys → Publishable key).",
    "Publishable key not fetched",
  );
}

/** Why a publishable key is refused: a secret key would be built into every page. */
export function refusePublishableKey(key: string): string | null {
  return isSecretKey(key)
    ? "this is a secret key, which would be built into every page: give the publishable key (sb_publishable_…)."
    : null;
}

/**
 * Tries the page's sign-up path with the publishable key, as the watch does; throws, in words for
 * the owner, unless the database refuses the test address as it must.
 */
export async function checkPagePath(url: string, key: string): Promise<void> {
  const client = createClient(url, key, { auth: { persistSession: false, autoRefreshToken: false } });
  const target = { url, keySource: "PUBLIC_SUPABASE_PUBLISHABLE_KEY", role: "anon" as const };
  const answer = await checkSignUpPath(client, target);
  if ("storedId" in answer)
    throw new ProjectError(
      `The page's sign-up path at ${url} stored "${REFUSED_ADDRESS}", which the database must refuse: its check ` +
        "(private.broken_check) is missing. Apply this repository's migrations, then remove the row " +
        `(npm run sign-ups -- list shows it; its id is ${answer.storedId}).`,
      "Page's sign-up check missing",
    );
}
