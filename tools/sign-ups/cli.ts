// `npm run sign-ups -- <verb>`: the site owner's command. Counts, lists, exports and removes
// sign-ups through Supabase's REST API with the secret key, on a real project as locally.
// Data goes to stdout, messages to stderr; any failure is one line and a non-zero exit status.
import { Command, InvalidArgumentError } from "commander";
import { createWriteStream, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { isValidEmail, normalizeEmail } from "../../src/lib/sign-up-rules.ts";
import { ConfigurationError } from "../../config/environment.ts";
import { OwnerCommandError, signUpsClient, type SignUps } from "./client.ts";
import { REASON_TOTALS, REASONS, type Reason } from "./marks.ts";
import { markDomains, markedGroups, markedTotals, reviewOf } from "./review.ts";
import { connect } from "./connection.ts";
import { csvWriter, toUtcIso, type CsvRecord } from "./csv.ts";
import { formatCount, renderChart } from "./chart.ts";
import { formatLocal, localTimeZone, parseSince } from "./dates.ts";
import { CHART_DAYS, CHART_HOURS, chartWindow, foldIntoDays, lastHours, recentTotals } from "./growth.ts";
import { formatTable } from "./table.ts";

/** How many rows `list` shows unless told otherwise. */
const DEFAULT_LIST_LIMIT = 50;

/** The width of the chart when stdout is no terminal (a file, a pipe). */
const PIPED_WIDTH = 80;

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** How long without a sign-up before `status` warns of Supabase's pausing (after 7 days). */
const QUIET_WARNING_MS = 3 * DAY_MS;

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
    "Count, list, export and remove the early-access sign-ups: on the local Supabase, or on a real " +
      "Supabase project given PUBLIC_SUPABASE_URL and SUPABASE_SECRET_KEY.",
  )
  .configureOutput({ outputError: (text, write) => write(text) });

program
  .command("count")
  .description(
    "How many signed up (in all, today, in the last 7 days), left a phone and are marked for review, " +
      "and a chart of sign-ups per day: the last 30 days, or since the first sign-up.",
  )
  .option("--hours", "chart the last 48 hours, hour by hour, instead of the days")
  .action(({ hours = false }: { hours?: boolean }) =>
    withSignUps(async (signUps) => {
      const now = commandNow();
      const zone = localTimeZone();
      // Every read at once: the hours of the longest window (a list younger than 30 days has no
      // hours before its first), whatever the totals say.
      const longest = chartWindow(now, zone, new Date(0));
      const [totals, counted, domains] = await Promise.all([
        signUps.totals(),
        signUps.hours(longest.since),
        signUps.domainCounts(),
      ]);
      if (totals.sign_ups === 0 || totals.first_at === null) {
        process.stdout.write("No sign-ups yet: the list is empty.\n");
        return;
      }
      const window = chartWindow(now, zone, new Date(totals.first_at));
      const days = foldIntoDays(counted, window.days, zone);
      const recent = recentTotals(days, window.days.at(-1)!);
      const { sign_ups, with_phone } = totals;
      const { marked, byReason } = markedTotals(totals.marked, domains, markDomains(domains));
      const reasons = REASONS.filter((reason) => byReason[reason] > 0).map(
        (reason) => `${formatCount(byReason[reason])} ${REASON_TOTALS[reason]}`,
      );
      const summary = [
        `${formatCount(sign_ups)} ${sign_ups === 1 ? "sign-up" : "sign-ups"}`,
        `${formatCount(recent.today)} today (since 00:00, ${zone})`,
        `${formatCount(recent.lastWeek)} in the last 7 days`,
        `${formatCount(with_phone)} with a phone (for the discount)`,
        `${formatCount(marked)} marked for review${reasons.length > 0 ? `: ${reasons.join(", ")}` : ""}`,
      ];
      const chart = hours
        ? {
            title: `Sign-ups per hour, the last ${CHART_HOURS} hours`,
            rows: lastHours(counted, now, zone).map(({ day, time, weekday, sign_ups }) => ({
              label: `${weekday} ${day} ${time}`,
              shortLabel: `${weekday} ${time}`,
              value: sign_ups,
            })),
          }
        : {
            title:
              days.length < CHART_DAYS
                ? `Sign-ups per day since the first, ${days[0]!.day}`
                : `Sign-ups per day, the last ${CHART_DAYS} days`,
            rows: days.map(({ day, weekday, sign_ups }) => ({
              label: `${weekday} ${day}`,
              shortLabel: day.slice(5),
              value: sign_ups,
            })),
          };
      // A terminal's own width and colours; piped, a classic 80 columns and no escape codes.
      const output = process.stdout;
      const width = output.isTTY ? output.columns : PIPED_WIDTH;
      const colour = output.isTTY && output.hasColors();
      const lines = [...summary, "", chart.title, ...renderChart(chart.rows, { width, colour })];
      output.write(`${lines.join("\n")}\n`);
    }),
  );

program
  .command("status")
  .description(
    "Whether the project answers (a paused one says so, with what to do), how many signed up, and when last.",
  )
  .action(() =>
    withSignUps(async (signUps, { url, local }) => {
      const started = performance.now();
      const { sign_ups, last_at } = await signUps.totals();
      const took = Math.round(performance.now() - started);
      const lines = [
        `The project at ${url} answers (in ${took} ms), with this repository's tables and views.`,
      ];
      if (last_at === null) lines.push("No sign-ups yet.");
      else {
        const quiet = commandNow().getTime() - new Date(last_at).getTime();
        lines.push(
          `${formatCount(sign_ups)} ${sign_ups === 1 ? "sign-up" : "sign-ups"}, the latest ` +
            `${formatLocal(new Date(last_at))} (${localTimeZone()}), ${formatAgo(quiet)}.`,
        );
        if (!local && quiet >= QUIET_WARNING_MS)
          lines.push(
            "A quiet page is not a dead one, but Supabase pauses a Free-plan project after 7 days of low " +
              'activity, and every sign-up then fails: see README.md, "A quiet project".',
          );
      }
      process.stdout.write(`${lines.join("\n")}\n`);
    }),
  );

/** `3 days ago`, `5 hours ago`, `just now`. */
function formatAgo(ms: number): string {
  const [unit, size] =
    ms >= DAY_MS
      ? ["day", DAY_MS]
      : ms >= HOUR_MS
        ? ["hour", HOUR_MS]
        : ms >= MINUTE_MS
          ? ["minute", MINUTE_MS]
          : [];
  if (!unit) return "just now";
  const count = Math.floor(ms / size!);
  return `${count} ${unit}${count === 1 ? "" : "s"} ago`;
}

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
  .action(
    ({ limit = DEFAULT_LIST_LIMIT, since, marked }: { limit?: number; since?: Date; marked?: boolean }) =>
      withSignUps(async (signUps) => {
        if (marked) {
          await listMarked(signUps);
          return;
        }
        const pages = signUps.pages({ since, newestFirst: true, limit });
        const rows: string[][] = [];
        for await (const page of pages) {
          for (const { email, phone, created_at } of page) {
            rows.push([formatLocal(new Date(created_at)), email, phone ?? ""]);
          }
        }
        const total = pages.total() ?? 0;
        const scope = since ? ` since ${formatLocal(since)}` : "";
        if (total === 0) {
          process.stderr.write(`No sign-ups${scope}.\n`);
          return;
        }
        process.stdout.write(`${formatTable([`SIGNED UP (${localTimeZone()})`, "EMAIL", "PHONE"], rows)}\n`);
        process.stderr.write(
          rows.length < total
            ? `The newest ${rows.length} of ${total}${scope}: --limit shows more, export writes them all.\n`
            : `${total} ${total === 1 ? "sign-up" : "sign-ups"}${scope}, newest first.\n`,
        );
      }),
  );

/**
 * `list --marked`: one line per group to act on, the latest first: a source past a pace, a
 * disposable or mistyped domain, a mailbox reached again; how many, when, a few addresses.
 */
async function listMarked(signUps: SignUps): Promise<void> {
  const [sources, counts, domains, mailboxes] = await Promise.all([
    signUps.sources(),
    signUps.domainCounts(),
    signUps.domains(),
    signUps.mailboxes(),
  ]);
  const marks = markDomains(counts);
  const groups = markedGroups(sources, domains, mailboxes, marks);
  if (groups.length === 0) {
    process.stderr.write("No sign-ups are marked for review.\n");
    return;
  }
  const rows = groups.map(({ reason, sign_ups, first_at, last_at, some_emails }) => [
    reason,
    String(sign_ups),
    formatLocal(new Date(first_at)),
    formatLocal(new Date(last_at)),
    some_emails.join(", ") + (sign_ups > some_emails.length ? ", …" : ""),
  ]);
  const zone = localTimeZone();
  process.stdout.write(
    `${formatTable(["REASON", "MARKED", `FIRST (${zone})`, `LAST (${zone})`, "ADDRESSES"], rows)}\n`,
  );
  const pastPace = sources.reduce((sum, { sign_ups }) => sum + sign_ups, 0);
  const { marked } = markedTotals(pastPace, counts, marks);
  process.stderr.write(
    `${formatCount(marked)} marked ${marked === 1 ? "sign-up" : "sign-ups"}, latest first. export shows each with its ` +
      "reasons; remove --source <id> removes one source's, remove --reason <reason> one reason's.\n",
  );
}

program
  .command("export")
  .description(
    "Every sign-up as CSV (email, phone, created_at in UTC, and source and review for a marked one), " +
      "oldest first, safe to open in a spreadsheet.",
  )
  .option("-o, --output <file>", "write to this file instead of stdout (replaced only once complete)")
  .option("--since <date>", "only those from this day (2026-11-01) or time (2026-11-01T09:30) on", since)
  .option("--bom", "start with a byte-order mark, so that Excel reads the file as UTF-8")
  .option("--without-marked", "leave out the sign-ups marked for review: a list to send the launch notice to")
  .action(
    ({
      output,
      since,
      bom = false,
      withoutMarked = false,
    }: {
      output?: string;
      since?: Date;
      bom?: boolean;
      withoutMarked?: boolean;
    }) =>
      withSignUps(async (signUps) => {
        const { marks, repeats } = await readMarks(signUps);
        const pages = signUps.pages({ since, newestFirst: false });
        let leftOut = 0;
        async function* records(): AsyncGenerator<CsvRecord> {
          for await (const page of pages) {
            for (const row of page) {
              const review = reviewOf(row, marks, repeats);
              if (review !== null && withoutMarked) {
                leftOut++;
                continue;
              }
              const { email, phone, created_at, source } = row;
              yield { email, phone, created_at: toUtcIso(created_at), source, review };
            }
          }
        }
        const exported = () => {
          const count = (pages.total() ?? 0) - leftOut;
          return (
            `${count} ${count === 1 ? "sign-up" : "sign-ups"}` +
            (withoutMarked ? ` (left out ${leftOut} marked for review: list --marked shows why)` : "")
          );
        };
        if (output === undefined || output === "-") {
          await pipeline(Readable.from(records()), csvWriter({ bom }), process.stdout, { end: false });
          process.stderr.write(`Exported ${exported()}.\n`);
          return;
        }
        await writeAtomically(output, (file) => pipeline(Readable.from(records()), csvWriter({ bom }), file));
        process.stderr.write(`Exported ${exported()} to ${output}.\n`);
      }),
  );

/**
 * The marks the command adds: each marked domain's, and the earliest address of each later
 * sign-up to a mailbox, by its id.
 */
async function readMarks(signUps: SignUps) {
  const [domains, repeats] = await Promise.all([signUps.domainCounts(), signUps.repeats()]);
  return {
    marks: markDomains(domains),
    repeats: new Map(repeats.map(({ id, repeats: earliest }) => [id, earliest])),
  };
}

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
    `remove the sign-ups marked for this reason: ${REASONS.map((reason) => `${reason} (${REASON_TOTALS[reason]})`).join(", ")}`,
    reasonName,
  )
  .action((email: string | undefined, { source, reason }: { source?: string; reason?: Reason }) => {
    if ([email, source, reason].filter((given) => given !== undefined).length !== 1) {
      program.error("error: remove takes an address, --source <id> or --reason <reason>: one of them.");
    }
    if (reason !== undefined) {
      return withSignUps(async (signUps) => {
        const removed = await removeForReason(signUps, reason);
        process.stderr.write(
          removed > 0
            ? `Removed ${removed} ${removed === 1 ? "sign-up" : "sign-ups"} ${REASON_TOTALS[reason]}.\n`
            : `No sign-ups ${REASON_TOTALS[reason]}: nothing was removed.\n`,
        );
      });
    }
    if (source !== undefined) {
      return withSignUps(async (signUps) => {
        const removed = await signUps.removeSource(source);
        process.stderr.write(
          removed > 0
            ? `Removed ${removed} marked ${removed === 1 ? "sign-up" : "sign-ups"} of source ${source}.\n`
            : `No marked sign-ups of source ${source}: nothing was removed.\n`,
        );
      });
    }
    const address = normalizeEmail(email!);
    return withSignUps(async (signUps) => {
      if (!isValidEmail(address)) throw new OwnerCommandError(`"${email}" is not an email address.`);
      const removed = await signUps.remove(address);
      process.stderr.write(
        removed ? `Removed ${address}.\n` : `${address} is not on the list: nothing was removed.\n`,
      );
    });
  });

/** Deletes the sign-ups marked for `reason`, as the marks read now; how many. */
async function removeForReason(signUps: SignUps, reason: Reason): Promise<number> {
  if (reason === "pace") return signUps.removePastPace();
  const { marks, repeats } = await readMarks(signUps);
  if (reason === "same-mailbox") return signUps.removeIds([...repeats.keys()]);
  const domains = [...marks].filter(([, mark]) => mark.reason === reason).map(([domain]) => domain);
  return signUps.removeAtDomains(domains);
}

/**
 * Runs `work` against the configured sign-ups, and turns any failure into one line on stderr
 * and exit status 1. A backend the command started is closed either way.
 */
async function withSignUps(
  work: (signUps: SignUps, target: { url: string; local: boolean }) => Promise<void>,
): Promise<void> {
  try {
    const connection = await connect();
    try {
      await work(signUpsClient(connection.client, connection), connection);
    } finally {
      await connection.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EPIPE") return; // `export | head`: the reader left
    const known = error instanceof OwnerCommandError || error instanceof ConfigurationError;
    process.stderr.write(
      `error: ${known ? (error as Error).message.replaceAll("\n", " ") : String(error)}\n`,
    );
    process.exitCode = 1;
  }
}

/**
 * Writes a file under a temporary name beside it, readable by its owner only (it holds personal
 * data), and gives it its name only once complete: a failure leaves any earlier file as it was.
 */
async function writeAtomically(path: string, write: (file: Writable) => Promise<void>): Promise<void> {
  const partial = join(dirname(path), `.${basename(path)}.${process.pid}.partial`);
  try {
    await write(createWriteStream(partial, { mode: 0o600 }));
    renameSync(partial, path);
  } finally {
    rmSync(partial, { force: true });
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
  if (!(REASONS as readonly string[]).includes(value))
    throw new InvalidArgumentError(`It takes one of ${REASONS.join(", ")}.`);
  return value as Reason;
}

function since(value: string): Date {
  const date = parseSince(value);
  if (!date)
    throw new InvalidArgumentError("It takes a date such as 2026-11-01, or a time such as 2026-11-01T09:30.");
  return date;
}

await program.parseAsync();
