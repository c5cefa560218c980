// What a failed call means for the owner, in one line: what happened and what to do, a paused
// project above all, which otherwise looks like any failure. Each failure has a title too, which
// GitHub shows on the run's page (tools/github/annotations.ts); any failure of a verb is told in those two
// (oneLine, titleOf).
import { readdirSync, readFileSync } from "node:fs";
import type { PostgrestError } from "@supabase/supabase-js";
import { OwnerFailure } from "../../config/owner-failure.ts";
import { DEPLOY_COMMAND } from "../supabase-cli.ts";

/** The title of a failure that names no cause of its own. */
const UNEXPECTED = "The owner's command failed";

/** A failure of the owner's command, told in one line; nothing was changed. */
export class OwnerCommandError extends OwnerFailure {
  constructor(message: string, title = UNEXPECTED) {
    super(message, title);
  }
}

/** A failure as the owner reads it: the tools' own messages (a setting's too) whole, on one line. */
export function oneLine(error: unknown): string {
  return error instanceof OwnerFailure ? error.message.replaceAll("\n", " ") : String(error);
}

/** A failure's cause in a few words, as GitHub titles it on the run's page. */
export function titleOf(error: unknown): string {
  return error instanceof OwnerFailure ? error.title : UNEXPECTED;
}

/** What the command talks to, for its messages. */
export interface Target {
  url: string;
  /** Where the key came from: `SUPABASE_SECRET_KEY`, or the local default. */
  keySource: string;
  /** The role the key acts as: the secret key's service_role (the default), or the page's anon. */
  role?: "service_role" | "anon";
}

/** The table the page signs up to. */
export const TABLE = "early_access";

/** Supabase's status for a request to a paused project (its "HTTP Status Codes" guide). */
const PROJECT_PAUSED = 540;

/**
 * The message for a failed call: what happened, and what to do about it. An answer none of the
 * known causes explains is `otherwise`'s to word (given `400 PT400: its message`), or said as it came.
 */
export function describeFailure(
  error: PostgrestError,
  status: number,
  { url, keySource, role = "service_role" }: Target,
  otherwise?: (answered: string) => OwnerCommandError,
): OwnerCommandError {
  const page = role === "anon";
  if (status === 0) {
    // supabase-js puts the cause in `details`: "…Caused by: Error: connect ECONNREFUSED 127.0.0.1:54321 (ECONNREFUSED)".
    const cause = /TimeoutError/.test(error.message)
      ? "no answer in time"
      : (/Caused by: (?:\w*Error: )?(.*?)(?: \([A-Z_]+\))?$/m.exec(error.details ?? "")?.[1] ??
        error.message);
    // A paused project's address stops resolving, as a deleted one's does.
    const unknownProject = cause.includes("ENOTFOUND") && projectRef(url) !== null;
    return new OwnerCommandError(
      `Cannot reach the Supabase API at ${url} (${cause}).` +
        (unknownProject
          ? ` If the address is right, the project may be paused or deleted: see ${dashboard(url)}.`
          : ""),
      unknownProject ? "Supabase project not found" : "Supabase unreachable",
    );
  }
  if (status === PROJECT_PAUSED) {
    return new OwnerCommandError(
      `The project at ${url} is paused (HTTP 540): it answers nothing, sign-ups from the page included. ` +
        `Resume it at ${dashboard(url)} (Resume project): its data and settings come back. ` +
        "Supabase pauses Free-plan projects after 7 days of low activity.",
      "Supabase project paused",
    );
  }
  if (error.code === "PGRST205") {
    const missing = /'public\.(\w+)'/.exec(error.message)?.[1] ?? TABLE;
    return new OwnerCommandError(
      `The project at ${url} has no ${missing === TABLE ? "table" : "view"} public.${missing}: apply ` +
        `this repository's migrations (${DEPLOY_COMMAND})` +
        (missing === TABLE ? `, the first being supabase/migrations/${creatingMigration()}.` : "."),
      "Migrations not applied",
    );
  }
  if (status === 401 && error.message === "Invalid API key") {
    return new OwnerCommandError(
      page
        ? `The API at ${url} refused the key from ${keySource} as invalid, as it refuses the page's sign-ups if the ` +
            "site was built with it: copy the project's publishable key (sb_publishable_…) from the dashboard, " +
            "Project Settings → API Keys, into the site's build settings (and build again) and this job's."
        : `The API at ${url} refused the key from ${keySource} as invalid: copy the project's secret ` +
            "key (sb_secret_…) from the dashboard, Project Settings → API Keys.",
      page ? "Publishable key refused" : "Secret key refused",
    );
  }
  if (error.code === "42501") {
    return new OwnerCommandError(
      page
        ? `The key from ${keySource} may not add a sign-up at ${url} (${error.message}): every sign-up from the ` +
            "page fails. Grant it back in the SQL editor as supabase/schemas/10_early_access.sql does: " +
            "grant insert (email, phone), select on table public.early_access to anon, authenticated;"
        : `The key from ${keySource} may not do this at ${url} (${error.message}): the owner's ` +
            "command needs the secret key (sb_secret_…), which acts as service_role.",
      page ? "Page may not sign up" : "Key may not do this",
    );
  }
  const code = error.code ? ` ${error.code}` : "";
  const message = shortened(error.message);
  if (status >= 500) {
    return new OwnerCommandError(
      `The API at ${url} answered ${status}${code}: ${message}. The failure is on the project's side: ` +
        `see its logs at ${dashboard(url)}, and https://status.supabase.com; try again later.`,
      `Supabase answered ${status}`,
    );
  }
  if (otherwise) return otherwise(`${status}${code}: ${message}`);
  return new OwnerCommandError(
    `The API at ${url} answered ${status}${code}: ${message}`,
    `Supabase answered ${status}`,
  );
}

/** A message on one line of at most 200 characters (an HTML error page can be thousands). */
function shortened(message: string): string {
  const line = message.replace(/\s+/g, " ").trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** A hosted project's ref, from its URL (`https://<ref>.supabase.co`); null elsewhere. */
function projectRef(url: string): string | null {
  return /^([a-z0-9]+)\.supabase\.co$/.exec(new URL(url).hostname)?.[1] ?? null;
}

/** Where the owner sees the project in Supabase's dashboard. */
function dashboard(url: string): string {
  const ref = projectRef(url);
  return ref ? `https://supabase.com/dashboard/project/${ref}` : "the Supabase dashboard";
}

/** The migration that creates the table, found by its content so that a rename cannot stale it. */
function creatingMigration(): string {
  const folder = new URL("../../supabase/migrations/", import.meta.url);
  const file = readdirSync(folder)
    .sort()
    .find((name) => readFileSync(new URL(name, folder), "utf8").includes(`create table public.${TABLE}`));
  return file ?? "*.sql";
}
