// The migrations the project lacks and their push, with the pinned Supabase CLI
// (tools/supabase-cli.ts): `db push --remote=<url> --dry-run` lists them, `--yes` applies them.
// `npm run deploy` and GitHub's migrations job (tools/github/pending-migrations.ts) both ask here,
// so this file imports nothing but node: and the tools' own (that job runs it before any install).
// The connection string holds the database's password: nothing the CLI prints is shown or thrown
// before it is masked (tools/github/mask.ts).
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { OwnerFailure } from "../../config/owner-failure.ts";
import { masked } from "../github/mask.ts";
import { runPinned } from "../npx.ts";
import { lastLines } from "../processes.ts";
import { SUPABASE_CLI } from "../supabase-cli.ts";

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
async function cli(root: string, args: string[], dbUrl: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { status, stdout, stderr } = await runPinned(SUPABASE_CLI, [...args, `--remote=${dbUrl}`], {
    cwd: root,
    env,
  });
  const output = masked(`${stdout}${stderr}`, dbUrl);
  if (status === 0) return output;
  throw new OwnerFailure(databaseFailure(output), "Database refused");
}

/** What a failed `db push` means for the owner, from the CLI's own words. */
export function databaseFailure(output: string): string {
  const why = lastLines(output, 3).join(" ");
  if (/password authentication failed|SASL auth|invalid password/i.test(output))
    return (
      `The database refused the password in SUPABASE_DB_PUSH_URL (${why}). Copy the connection string again ` +
      "(the dashboard's Connect → Session pooler) with the database's password; a forgotten one is reset in " +
      "Project Settings → Database."
    );
  if (
    /connection refused|ECONNREFUSED|dial error|no such host|timeout|network is unreachable|ENOTFOUND/i.test(
      output,
    )
  )
    return (
      `The database at SUPABASE_DB_PUSH_URL does not answer (${why}). Check the string (the dashboard's ` +
      "Connect → Session pooler: the pooler's host and port 5432), the network, and that the project is not paused."
    );
  return `The Supabase CLI failed on the database at SUPABASE_DB_PUSH_URL: ${why}`;
}

/** The repository's migrations the project lacks, as the CLI's dry run lists them. */
export async function pendingMigrations(
  root: string,
  dbUrl: string,
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  const output = await cli(root, ["db", "push", "--dry-run"], dbUrl, env);
  const pending = namedMigrations(output, repositoryMigrations(root));
  if (pending.length === 0 && !/\bup to date\b/i.test(output))
    throw new OwnerFailure(
      `The Supabase CLI's dry run did not say which migrations the project lacks: ${lastLines(output, 3).join(" ")}`,
      "Migrations unknown",
    );
  return pending;
}

/** Applies every migration the project lacks. */
export async function pushMigrations(root: string, dbUrl: string, env: NodeJS.ProcessEnv): Promise<void> {
  await cli(root, ["db", "push", "--yes"], dbUrl, env);
}
