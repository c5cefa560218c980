// `npm run sign-ups -- <verb>`: the site owner's command. Counts, lists, exports, backs up and
// removes sign-ups through Supabase's REST API with the secret key, on a real project as locally.
// Data goes to stdout, messages to stderr; any failure is one line (under GitHub Actions, an
// annotation with its title, and the run's summary says it too) and a non-zero exit status.
// This file parses the arguments and connects; each verb is a function of its file in verbs/.
import { Command, InvalidArgumentError } from "commander";
import { readEnvironment } from "../../config/environment.ts";
import { ownerLine, reportFailure, underActions, workflowCommand } from "../github/annotations.ts";
import { signUpsClient } from "./client.ts";
import { oneLine, OwnerCommandError, titleOf } from "./failures.ts";
import { checkSignUpPath } from "./probe.ts";
import { checkSite } from "./site.ts";
import { connect, type ConnectOptions, type Connection } from "./connection.ts";
import { localTimeZone, parseSince } from "./dates.ts";
import { MAILING_TOOLS, type MailingTool } from "./mailing-tools.ts";
import { REASON_NAMES, REASONS, type Reason } from "./marks.ts";
import { backup } from "./verbs/backup.ts";
import type { VerbContext } from "./verbs/context.ts";
import { count } from "./verbs/count.ts";
import { exportList, type ExportOptions } from "./verbs/export.ts";
import { DEFAULT_LIST_LIMIT, list, listMarked } from "./verbs/list.ts";
import { removeAddress, removeReason, removeSource } from "./verbs/remove.ts";
import { status } from "./verbs/status.ts";
import { watch } from "./verbs/watch.ts";

/** Where tests give the command its "now" (an ISO 8601 instant), so that none waits for the clock. */
const CLOCK_VARIABLE = "SIGN_UPS_NOW";

/** The instant days and hours are counted from: now, or the one the tests gave. */
function commandNow(): Date {
  const given = process.env[CLOCK_VARIABLE];
  if (!given) return new Date();
  const instant = new Date(given);
  if (Number.isNaN(instant.getTime()))
    throw new OwnerCommandError(
      `${CLOCK_VARIABLE} (${given}) is not an instant such as 2026-11-27T09:30:00Z.`,
    );
  return instant;
}

const program = new Command("sign-ups")
  .usage("<verb> [options]   (npm run sign-ups -- <verb>)")
  .description(
    "Count, list, export, back up and remove the early-access sign-ups: on the local Supabase, or on a real " +
      "Supabase project given PUBLIC_SUPABASE_URL and SUPABASE_SECRET_KEY.",
  )
  // A wrong argument is a failure too: under GitHub Actions, an annotation like any other.
  .configureOutput({
    outputError: (text, write) =>
      write(
        underActions()
          ? `${workflowCommand("error", text.replace(/^error: /, "").trimEnd(), "Wrong arguments")}\n`
          : text,
      ),
  });

program
  .command("count")
  .description(
    "How many signed up (in all, today, in the last 7 days), left a phone and are marked for review, " +
      "and a chart of sign-ups per day: the last 30 days, or since the first sign-up.",
  )
  .option("--hours", "chart the last 48 hours, hour by hour, instead of the days")
  .action(({ hours = false }: { hours?: boolean }) => run((context) => count(context, { hours })));

program
  .command("status")
  .description(
    "Whether the project answers (a paused one says so, with what to do), how many signed up, and when last.",
  )
  .action(() => run((context, connection) => status(context, connection)));

/** How long `watch` waits for each answer: a scheduled job must not hang on a project that never answers. */
const WATCH_TIMEOUT_MS = 30_000;

program
  .command("watch")
  .description(
    "For a scheduled job: read the list with the secret key (activity that keeps a Free project from " +
      "pausing), check the page's own sign-up path with the publishable key (PUBLIC_SUPABASE_PUBLISHABLE_KEY), " +
      "storing nothing, and report what count does in Markdown, on stdout and appended to GITHUB_STEP_SUMMARY " +
      "when it is set (without the counts when SIGN_UPS_COUNTS=hide). Fails, in one line saying what to do, when either does not answer as it should.",
  )
  .action(() =>
    run(
      (context, connection) => {
        const siteUrl = readEnvironment().SITE_URL;
        return watch(context, {
          url: connection.url,
          // The page's key is looked for only now: without it, the list is still read (and kept
          // active), and the report says what is missing.
          checkPage: async () => {
            const page = connection.asThePage();
            return checkSignUpPath(page.client, page);
          },
          checkSite: siteUrl ? () => checkSite(siteUrl, connection.url, { now: context.now }) : undefined,
          warn: (title, message) => process.stderr.write(`${ownerLine("warning", message, title)}\n`),
          summaryFile: process.env.GITHUB_STEP_SUMMARY || undefined,
          // The workflows hide them in a public repository, unless the owner publishes them.
          counts: process.env.SIGN_UPS_COUNTS !== "hide",
        });
      },
      { requestTimeoutMs: WATCH_TIMEOUT_MS },
    ),
  );

program
  .command("backup")
  .description(
    "Every sign-up, as export writes it, encrypted to an age public key (BACKUP_PUBLIC_KEY, or --to) as it is " +
      "written: only the holder of the private key can read the file, and the list never touches the disk in the clear.",
  )
  .requiredOption("-o, --output <file>", "the encrypted file to write, such as sign-ups.csv.age")
  .option("--to <recipient>", "the age public key (age1…) to encrypt to, instead of BACKUP_PUBLIC_KEY")
  .action(({ output, to }: { output: string; to?: string }) => {
    const recipient = to ?? readEnvironment().BACKUP_PUBLIC_KEY;
    if (!recipient) {
      program.error(
        'error: backup takes an age public key: BACKUP_PUBLIC_KEY or --to age1… (tools/sign-ups/README.md, "An encrypted backup").',
      );
      return;
    }
    return run((context) =>
      backup(context, { output, recipient, recipientSource: to ? "--to" : "BACKUP_PUBLIC_KEY" }),
    );
  });

program
  .command("list")
  .description(
    "The newest sign-ups first, as a table; or, with --marked, the marked sign-ups by group, with their reasons.",
  )
  .option("-L, --limit <n>", `show at most n sign-ups (default ${DEFAULT_LIST_LIMIT})`, positiveInteger)
  .option("--since <date>", "only those from this day (2026-11-01) or time (2026-11-01T09:30) on", since)
  .option(
    "--marked",
    "the sign-ups marked for review, with their reasons, grouped by source, domain or mailbox",
  )
  .action(({ limit, since, marked }: { limit?: number; since?: Date; marked?: boolean }) =>
    run((context) => (marked ? listMarked(context) : list(context, { limit, since }))),
  );

program
  .command("export")
  .description(
    "Every sign-up as CSV (email, phone, created_at in UTC, and source and review for a marked one), " +
      "oldest first, safe to open in a spreadsheet; or, with --for, as a mailing tool imports it, " +
      "without the marked sign-ups.",
  )
  .option("-o, --output <file>", "write to this file instead of stdout (replaced only once complete)")
  .option("--since <date>", "only those from this day (2026-11-01) or time (2026-11-01T09:30) on", since)
  .option("--bom", "start with a byte-order mark, so that Excel reads the file as UTF-8")
  .option("--without-marked", "leave out the sign-ups marked for review: a list to send the launch notice to")
  .option(
    "--for <tool>",
    `the columns a mailing tool's import reads (${MAILING_TOOLS.join(", ")}), phones in E.164; ` +
      "leaves out the marked sign-ups (tools/sign-ups/README.md walks each import)",
    toolName,
  )
  .option("--with-marked", "with --for: keep the sign-ups marked for review")
  .option(
    "--country <code>",
    "with --for: the country whose phone numbers were typed without a country code (FR, US…)",
    country,
  )
  .action((options: ExportOptions) => {
    if (options.for === undefined && (options.withMarked || options.country !== undefined))
      program.error("error: --with-marked and --country go with --for <tool>; plain export keeps everyone.");
    if (options.withMarked && options.withoutMarked)
      program.error("error: export takes --with-marked or --without-marked: one of them.");
    return run(async (context) => void (await exportList(context, options)));
  });

program
  .command("remove")
  .description(
    "Remove one address from the list, however it was typed (spaces, capitals), as a removal request " +
      "asks; or, with --source, the marked sign-ups of one source; or, with --reason, those marked for one reason.",
  )
  .argument("[email]", "the address to remove")
  .option("--source <id>", "remove this source's marked sign-ups (list --marked shows the ids)", sourceId)
  .option(
    "--reason <reason>",
    `remove the sign-ups marked for this reason: ${REASON_NAMES.map((reason) => `${reason} (${REASONS[reason]})`).join(", ")}`,
    reasonName,
  )
  .action((email: string | undefined, { source, reason }: { source?: string; reason?: Reason }) => {
    if ([email, source, reason].filter((given) => given !== undefined).length !== 1) {
      program.error("error: remove takes an address, --source <id> or --reason <reason>: one of them.");
    }
    if (reason !== undefined) return run((context) => removeReason(context, reason));
    if (source !== undefined) return run((context) => removeSource(context, source));
    return run((context) => removeAddress(context, email!));
  });

/**
 * Runs a verb against the configured sign-ups, and turns any failure into one line on stderr
 * and exit status 1. A backend the command started is closed either way.
 */
async function run(
  verb: (context: VerbContext, connection: Connection) => Promise<void>,
  options: ConnectOptions = {},
): Promise<void> {
  try {
    const now = commandNow();
    const connection = await connect(undefined, options);
    try {
      const signUps = signUpsClient(connection.client, connection);
      const context = { signUps, now, zone: localTimeZone(), stdout: process.stdout, stderr: process.stderr };
      await verb(context, connection);
    } finally {
      await connection.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EPIPE") return; // `export | head`: the reader left
    // Under GitHub Actions, an annotation with its title, which the run's page and GitHub's email
    // show, and the same in the run's summary; elsewhere, `error: …`.
    reportFailure(oneLine(error), titleOf(error));
    process.exitCode = 1;
  }
}

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < 1)
    throw new InvalidArgumentError("It takes a whole number above 0, such as 100.");
  return number;
}

/** A source's short keyed id, as list --marked and export show it: 12 hexadecimal digits. */
function sourceId(value: string): string {
  if (!/^[0-9a-f]{12}$/.test(value))
    throw new InvalidArgumentError("It takes a source's id as list --marked shows it, such as 3f9c2a71b0d4.");
  return value;
}

function reasonName(value: string): Reason {
  if (!(REASON_NAMES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`It takes one of ${REASON_NAMES.join(", ")}.`);
  return value as Reason;
}

function toolName(value: string): MailingTool {
  if (!(MAILING_TOOLS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`It takes one of ${MAILING_TOOLS.join(", ")}.`);
  return value as MailingTool;
}

/** A two-letter country code, upper-cased; whether phones know it is for the export to say. */
function country(value: string): string {
  if (!/^[a-z]{2}$/i.test(value.trim()))
    throw new InvalidArgumentError("It takes a country's two-letter code, such as FR or US.");
  return value.trim().toUpperCase();
}

function since(value: string): Date {
  const date = parseSince(value);
  if (!date)
    throw new InvalidArgumentError("It takes a date such as 2026-11-01, or a time such as 2026-11-01T09:30.");
  return date;
}

await program.parseAsync();
