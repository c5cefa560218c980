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
import { appendFileSync, readdirSync } from "node:fs";
import { reportFailure } from "./annotations.ts";
import { masked, maskInLaterLines } from "./mask.ts";
import { runSupabase } from "../supabase-cli.ts";

const MIGRATIONS = "supabase/migrations";

/** The migrations a dry run's output names, in their order, from the files there are. */
function named(output: string, files: string[]): string[] {
  const words = new Set(output.split(/\s+/));
  return files.filter((file) => words.has(file));
}

if (import.meta.main) {
  const url = process.env.SUPABASE_DB_PUSH_URL;
  maskInLaterLines(url);
  const files = readdirSync(MIGRATIONS)
    .filter((file) => /^\d+_.+\.sql$/.test(file))
    .sort();
  const { status, stdout, stderr } = url
    ? runSupabase(["db", "push", `--remote=${url}`, "--dry-run"], { cwd: process.cwd() })
    : { status: 2, stdout: "", stderr: "SUPABASE_DB_PUSH_URL is not set." };
  // Masked before anything is printed: the CLI may name the database's password in an error.
  const output = masked(`${stdout}${stderr}`, url);
  process.stdout.write(output);
  const pending = named(output, files);
  const summarize = (text: string) =>
    process.env.GITHUB_STEP_SUMMARY && appendFileSync(process.env.GITHUB_STEP_SUMMARY, text);
  if (status !== 0 || (pending.length === 0 && !/\bup to date\b/i.test(output))) {
    // The CLI's last lines say why (a refused password, an older migration than the project's newest…).
    const why = output.trim().split("\n").slice(-3).join(" ");
    reportFailure(
      `The Supabase CLI's dry run could not tell which migrations the project lacks: ${why}`,
      "Migrations unknown",
    );
    process.exit(1);
  }
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
