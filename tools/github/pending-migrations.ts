// `node tools/github/pending-migrations.ts`, a step of the migrations' workflow: which of
// supabase/migrations the live project lacks, as the pinned CLI's dry run answers
// (`db push --remote=<url> --dry-run`, tools/supabase-cli.ts), whatever the last commit changed:
// several commits pushed at once, a rebase merge, or an earlier run cancelled all leave the project
// behind by more than one commit's migrations. Their file names go to the step's output
// `migrations` (space-separated; empty when none), and to the run's summary, which the reviewer
// who approves the `production` environment reads before the push.
//
// Reads SUPABASE_DB_PUSH_URL (the database's connection string, with its password: masked in all it
// prints, mask.ts), PUSH (`reviewed` or `unreviewed`: the gate's answer, review.ts), and what a
// runner sets: GITHUB_OUTPUT, GITHUB_STEP_SUMMARY. Runs before any
// install, on Node alone: it imports nothing but node: and the tools' own files.
import { appendFileSync } from "node:fs";
import { OwnerFailure } from "../../config/owner-failure.ts";
import { pendingMigrations } from "../deploy/migrations.ts";
import { reportFailure } from "./annotations.ts";
import { maskInLaterLines } from "./mask.ts";

if (import.meta.main) {
  const url = process.env.SUPABASE_DB_PUSH_URL;
  maskInLaterLines(url);
  let pending: string[];
  try {
    if (!url) throw new OwnerFailure("SUPABASE_DB_PUSH_URL is not set.", "Migrations unknown");
    pending = await pendingMigrations(process.cwd(), url, process.env);
  } catch (error) {
    if (!(error instanceof OwnerFailure)) throw error;
    reportFailure(
      `The Supabase CLI's dry run could not tell which migrations the project lacks: ${error.message}`,
      "Migrations unknown",
    );
    process.exit(1);
  }
  process.stdout.write(pending.length === 0 ? "Up to date.\n" : `${pending.join("\n")}\n`);
  const summarize = (text: string) =>
    process.env.GITHUB_STEP_SUMMARY && appendFileSync(process.env.GITHUB_STEP_SUMMARY, text);
  if (process.env.GITHUB_OUTPUT)
    appendFileSync(process.env.GITHUB_OUTPUT, `migrations=${pending.join(" ")}\n`);
  if (pending.length === 0) summarize("The project has every migration: nothing to push.\n");
  else
    summarize(
      `## ${pending.length === 1 ? "A migration" : `${pending.length} migrations`} the project lacks\n\n` +
        pending.map((file) => `- \`${file}\`\n`).join("") +
        "\nThe push applies them, after an encrypted backup of the list, " +
        (process.env.PUSH === "unreviewed"
          ? "without review: the repository variable ALLOW_UNREVIEWED_PUSH says so.\n"
          : "once approved in the `production` environment.\n"),
    );
}
