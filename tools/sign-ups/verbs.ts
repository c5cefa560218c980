// Each verb of the owner's command as a function of what it reads from (the sign-ups, client.ts),
// its clock and zone, and where it writes (stdout for data, stderr for messages): a thin
// composition of the reads, the pure computing (summary.ts, review.ts) and the pure formatting
// (report.ts, table.ts, csv.ts). cli.ts parses the arguments and hands each verb the real ones;
// the tests hand it their own. A failure is thrown (OwnerCommandError: one line for the owner).
import { appendFileSync, createWriteStream, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { PassThrough, Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ConfigurationError } from "../../config/environment.ts";
import { DEPLOY_COMMAND } from "../supabase-cli.ts";
import { isValidEmail, normalizeEmail } from "../../src/lib/sign-up-rules.ts";
import { formatCount } from "./chart.ts";
import { OwnerCommandError } from "./failures.ts";
import { REFUSED_ADDRESS, type PageAnswer } from "./probe.ts";
import type { SignUps } from "./rows.ts";
import { csvWriter, toolCsvWriter, toUtcIso, type CsvRecord } from "./csv.ts";
import { formatLocal } from "./dates.ts";
import { TOOL_FORMATS, toolRow, type MailingTool } from "./mailing-tools.ts";
import { REASONS, unhandled, type Reason } from "./marks.ts";
import { countLines, EMPTY_LIST, PIPED_WIDTH, watchMarkdown } from "./report.ts";
import type { SiteAnswer } from "./site.ts";
import { markDomains, markedGroups, markedTotals, reviewOf } from "./review.ts";
import { hoursSince, summarize, type Summary } from "./summary.ts";
import { formatTable } from "./table.ts";

/** Where a verb writes: a terminal (its width and colours), a pipe, a file, or a test's buffer. */
export type Output = Writable & { isTTY?: boolean; columns?: number; hasColors?: () => boolean };

export interface VerbContext {
  signUps: SignUps;
  /** The instant days and hours are counted from. */
  now: Date;
  /** The owner's time zone (`Europe/Paris`): the days' and the tables' (formatLocal's is the process's). */
  zone: string;
  /** Data. */
  stdout: Output;
  /** Messages. */
  stderr: Output;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** How long without a sign-up before `status` warns of Supabase's pausing (after 7 days). */
const QUIET_WARNING_MS = 3 * DAY_MS;

/** How many rows `list` shows unless told otherwise. */
export const DEFAULT_LIST_LIMIT = 50;

/** The three reads a summary needs, at once, and the summary; null for an empty list. */
async function readSummary({ signUps, now, zone }: VerbContext, byHour = false): Promise<Summary | null> {
  const [totals, hours, domains] = await Promise.all([
    signUps.totals(),
    signUps.hours(hoursSince(now, zone)),
    signUps.domainCounts(),
  ]);
  return summarize({ totals, hours, domains }, now, zone, { byHour });
}

/** `count`: the totals and a chart per day (or, with `hours`, per hour of the last 48). */
export async function count(context: VerbContext, { hours = false } = {}): Promise<void> {
  const summary = await readSummary(context, hours);
  const { stdout } = context;
  if (summary === null) {
    stdout.write(`${EMPTY_LIST}\n`);
    return;
  }
  // A terminal's own width and colours; piped, a classic 80 columns and no escape codes.
  const width = stdout.isTTY ? (stdout.columns ?? PIPED_WIDTH) : PIPED_WIDTH;
  const colour = Boolean(stdout.isTTY && stdout.hasColors?.());
  stdout.write(`${countLines(summary, { width, colour }).join("\n")}\n`);
}

export interface WatchOptions {
  /** The project's address, for the messages. */
  url: string;
  /** Sends the page's own sign-up request with the publishable key (probe.ts, checkSignUpPath). */
  checkPage: () => Promise<PageAnswer>;
  /** Looks at the site (site.ts, checkSite); absent when no SITE_URL says where it is. */
  checkSite?: () => Promise<SiteAnswer>;
  /** Says what to see to before it fails (a certificate near its end): a warning where the owner looks. */
  warn?: (title: string, message: string) => void;
  /** A file the report is appended to, as GitHub's GITHUB_STEP_SUMMARY: the run's summary page. */
  summaryFile?: string;
}

/**
 * `watch`, for a scheduled job: the list read with the secret key (what `count` reads: real
 * activity, which keeps a Free project from pausing), the page's own sign-up path checked with
 * the publishable key, and the site looked at, all at once; then `count`'s summary in Markdown,
 * with the site's, on stdout and appended to `summaryFile`. The project failing fails it before
 * any report (the secret key's read first), a row the page's path stored (its check gone) removed
 * whatever the reads did; the site failing, once the report is written.
 */
export async function watch(
  context: VerbContext,
  { url, checkPage, checkSite, warn = () => {}, summaryFile }: WatchOptions,
): Promise<void> {
  const [read, page, site] = await Promise.allSettled([
    readSummary(context),
    checkPage().then(async (answer) => {
      if (!("storedId" in answer)) return answer;
      // Removed at once, whatever the reads do: the row must not stay in the list.
      await context.signUps.removeIds([answer.storedId]);
      throw new OwnerCommandError(
        `The page's sign-up path at ${url} stored "${REFUSED_ADDRESS}", which the database must refuse: its ` +
          "check (private.check_sign_up) is missing or changed. The row was removed; apply this repository's " +
          `migrations (${DEPLOY_COMMAND}).`,
        "Page's sign-up check missing",
      );
    }),
    checkSite ? checkSite() : Promise.resolve(null),
  ]);
  if (read.status === "rejected") throw read.reason;
  if (page.status === "rejected") throw page.reason;
  const siteReport = site.status === "fulfilled" ? site.value : { failure: oneLine(site.reason) };
  const report = watchMarkdown(read.value, page.value, siteReport, context.now, context.zone);
  context.stdout.write(report);
  if (summaryFile) appendFileSync(summaryFile, report);
  if (site.status === "rejected") throw site.reason;
  for (const { title, message } of site.value?.warnings ?? []) warn(title, message);
}

/** A failure as the owner reads it: the command's own messages whole, on one line. */
export function oneLine(error: unknown): string {
  const known = error instanceof OwnerCommandError || error instanceof ConfigurationError;
  return known ? (error as Error).message.replaceAll("\n", " ") : String(error);
}

/** A failure's cause in a few words, as GitHub titles it on the run's page. */
export function titleOf(error: unknown): string {
  if (error instanceof OwnerCommandError) return error.title;
  if (error instanceof ConfigurationError) return "Settings refused";
  return "The owner's command failed";
}

/** `status`: whether the project answers, how many signed up, and when last. */
export async function status(
  context: VerbContext,
  { url, local }: { url: string; local: boolean },
): Promise<void> {
  const started = performance.now();
  const { sign_ups, last_at } = await context.signUps.totals();
  const took = Math.round(performance.now() - started);
  const lines = [`The project at ${url} answers (in ${took} ms), with this repository's tables and views.`];
  if (last_at === null) lines.push("No sign-ups yet.");
  else {
    const quiet = context.now.getTime() - new Date(last_at).getTime();
    lines.push(
      `${formatCount(sign_ups)} ${sign_ups === 1 ? "sign-up" : "sign-ups"}, the latest ` +
        `${formatLocal(new Date(last_at))} (${context.zone}), ${formatAgo(quiet)}.`,
    );
    if (!local && quiet >= QUIET_WARNING_MS)
      lines.push(
        "A quiet page is not a dead one, but Supabase pauses a Free-plan project after 7 days of low " +
          'activity, and every sign-up then fails: see README.md, "A quiet project".',
      );
  }
  context.stdout.write(`${lines.join("\n")}\n`);
}

/** `3 days ago`, `5 hours ago`, `just now`. */
export function formatAgo(ms: number): string {
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

/** `list`: the newest sign-ups first, as a table. */
export async function list(
  { signUps, zone, stdout, stderr }: VerbContext,
  { limit = DEFAULT_LIST_LIMIT, since }: { limit?: number; since?: Date },
): Promise<void> {
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
    stderr.write(`No sign-ups${scope}.\n`);
    return;
  }
  stdout.write(`${formatTable([`SIGNED UP (${zone})`, "EMAIL", "PHONE"], rows)}\n`);
  stderr.write(
    rows.length < total
      ? `The newest ${rows.length} of ${total}${scope}: --limit shows more, export writes them all.\n`
      : `${total} ${total === 1 ? "sign-up" : "sign-ups"}${scope}, newest first.\n`,
  );
}

/**
 * `list --marked`: one line per group to act on, the latest first: a source past a pace, a
 * disposable or mistyped domain, a mailbox reached again; how many, when, a few addresses.
 */
export async function listMarked({ signUps, zone, stdout, stderr }: VerbContext): Promise<void> {
  const [sources, counts, domains, mailboxes] = await Promise.all([
    signUps.sources(),
    signUps.domainCounts(),
    signUps.domains(),
    signUps.mailboxes(),
  ]);
  const marks = markDomains(counts);
  const groups = markedGroups(sources, domains, mailboxes, marks);
  if (groups.length === 0) {
    stderr.write("No sign-ups are marked for review.\n");
    return;
  }
  const rows = groups.map(({ reason, sign_ups, first_at, last_at, some_emails }) => [
    reason,
    String(sign_ups),
    formatLocal(new Date(first_at)),
    formatLocal(new Date(last_at)),
    some_emails.join(", ") + (sign_ups > some_emails.length ? ", …" : ""),
  ]);
  stdout.write(
    `${formatTable(["REASON", "MARKED", `FIRST (${zone})`, `LAST (${zone})`, "ADDRESSES"], rows)}\n`,
  );
  const pastPace = sources.reduce((sum, { sign_ups }) => sum + sign_ups, 0);
  const { marked } = markedTotals(pastPace, counts, marks);
  stderr.write(
    `${formatCount(marked)} marked ${marked === 1 ? "sign-up" : "sign-ups"}, latest first. export shows each with its ` +
      "reasons; remove --source <id> removes one source's, remove --reason <reason> one reason's.\n",
  );
}

export interface ExportOptions {
  /** A file to write (replaced only once complete); stdout when absent or `-`. */
  output?: string;
  since?: Date;
  bom?: boolean;
  /** The plain export: leave out the marked sign-ups. */
  withoutMarked?: boolean;
  /** For a mailing tool's import: its columns, the marked left out unless `withMarked`. */
  for?: MailingTool;
  withMarked?: boolean;
  /** Where national phones (without a country code) are dialled, for a tool's E.164: `FR`. */
  country?: string;
}

/**
 * `export`: every sign-up as CSV, oldest first, with its marks' reasons; or, `--for` a mailing
 * tool, as that tool imports it, the marked left out unless `withMarked`.
 */
export async function exportList(
  { signUps, stdout, stderr }: VerbContext,
  options: ExportOptions,
): Promise<number> {
  const { output, since, bom = false, for: tool, withMarked = false, country } = options;
  const leaveOutMarked = tool === undefined ? options.withoutMarked === true : !withMarked;
  const readPhone = tool === undefined ? null : await phoneReader(country);
  const { marks, repeats } = await readMarks(signUps);
  const pages = signUps.pages({ since, newestFirst: false });
  let leftOut = 0;
  const phones = { unreadable: 0, "no column": 0 };
  async function* records(): AsyncGenerator<CsvRecord | string[]> {
    for await (const page of pages) {
      for (const row of page) {
        const review = reviewOf(row, marks, repeats);
        if (review !== null && leaveOutMarked) {
          leftOut++;
          continue;
        }
        const { email, phone, created_at, source } = row;
        if (tool === undefined) {
          yield { email, phone, created_at: toUtcIso(created_at), source, review };
          continue;
        }
        const { cells, phone: fate } = toolRow(tool, row, readPhone!);
        if (fate === "unreadable" || fate === "no column") phones[fate]++;
        yield cells;
      }
    }
  }
  const writer = () =>
    tool === undefined ? csvWriter({ bom }) : toolCsvWriter(TOOL_FORMATS[tool].columns, { bom });
  const exported = () => {
    const count = (pages.total() ?? 0) - leftOut;
    const notes = [
      leaveOutMarked &&
        `left out ${leftOut} marked for review: list --marked shows why` +
          (tool === undefined ? "" : "; --with-marked keeps them"),
      phones.unreadable > 0 &&
        `${phones.unreadable} ${phones.unreadable === 1 ? "phone" : "phones"} not read as a number, left empty` +
          (country === undefined ? ": --country <code> reads those without a country code" : ""),
      phones["no column"] > 0 &&
        `${phones["no column"]} ${phones["no column"] === 1 ? "phone" : "phones"} left out, as ` +
          `${TOOL_FORMATS[tool!].name} has no phone field: plain export keeps them`,
    ].filter(Boolean);
    return (
      `${count} ${count === 1 ? "sign-up" : "sign-ups"}` +
      (tool === undefined ? "" : ` for ${TOOL_FORMATS[tool].name}`) +
      (notes.length > 0 ? ` (${notes.join("; ")})` : "")
    );
  };
  if (output === undefined || output === "-") {
    await pipeline(Readable.from(records()), writer(), stdout, { end: false });
    stderr.write(`Exported ${exported()}.\n`);
  } else {
    await writeAtomically(output, (file) => pipeline(Readable.from(records()), writer(), file));
    stderr.write(`Exported ${exported()} to ${output}.\n`);
  }
  return (pages.total() ?? 0) - leftOut;
}

/** An age public key, as age-keygen prints it: `age1` and 58 characters of bech32. */
const AGE_RECIPIENT = /^age1[02-9ac-hj-np-z]{58}$/;

/**
 * `backup`: the plain export (everyone, with their marks), encrypted as it is written to the age
 * public key `recipient`: only the holder of its private key can read the file. The list never
 * touches the disk in the clear: the CSV streams from the export into the encryption, in memory.
 */
export async function backup(
  context: VerbContext,
  { output, recipient, recipientSource }: { output: string; recipient: string; recipientSource: string },
): Promise<void> {
  if (!AGE_RECIPIENT.test(recipient))
    throw new OwnerCommandError(
      `${recipientSource} is not an age public key (age1… as age-keygen prints it): see tools/sign-ups/README.md, "An encrypted backup".`,
      "Backup key not valid",
    );
  const { Encrypter } = await import("age-encryption");
  const encrypter = new Encrypter();
  encrypter.addRecipient(recipient);
  const clear = new PassThrough();
  let failure: unknown = null;
  let count = 0;
  const exporting = exportList({ ...context, stdout: clear, stderr: new PassThrough().resume() }, {}).then(
    (exported) => {
      count = exported;
      clear.end();
    },
    (error: unknown) => {
      failure = error;
      clear.destroy(error as Error);
    },
  );
  const encrypted = await encrypter.encrypt(Readable.toWeb(clear) as ReadableStream<Uint8Array>);
  try {
    await writeAtomically(output, (file) => pipeline(Readable.fromWeb(encrypted as never), file));
  } catch (error) {
    throw failure ?? error;
  }
  await exporting;
  if (failure) throw failure;
  context.stderr.write(
    `Backed up ${count} ${count === 1 ? "sign-up" : "sign-ups"} to ${output}, encrypted to ${recipient.slice(0, 12)}…: ` +
      "only the holder of its private key can read it (age -d -i key.txt).\n",
  );
}

/**
 * Phones read into E.164, dialled from `country` when one is given: phones.ts loaded only now, as
 * only `export --for` needs its rules, which take a while to load.
 */
async function phoneReader(country: string | undefined): Promise<(phone: string) => string | null> {
  const { countryCode, toE164 } = await import("./phones.ts");
  if (country === undefined) return (phone) => toE164(phone);
  const code = countryCode(country);
  if (code === null)
    throw new OwnerCommandError(
      `--country ${country} is no country that phones know, such as FR or US.`,
      "Wrong arguments",
    );
  return (phone) => toE164(phone, code);
}

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

/** `remove <email>`: one address, however it was typed, normalised as the database stores it. */
export async function removeAddress({ signUps, stderr }: VerbContext, typed: string): Promise<void> {
  const address = normalizeEmail(typed);
  if (!isValidEmail(address))
    throw new OwnerCommandError(`"${typed}" is not an email address.`, "Wrong arguments");
  const removed = await signUps.remove(address);
  stderr.write(removed ? `Removed ${address}.\n` : `${address} is not on the list: nothing was removed.\n`);
}

/** `remove --source <id>`: one source's marked sign-ups. */
export async function removeSource({ signUps, stderr }: VerbContext, source: string): Promise<void> {
  const removed = await signUps.removeSource(source);
  stderr.write(
    removed > 0
      ? `Removed ${removed} marked ${removed === 1 ? "sign-up" : "sign-ups"} of source ${source}.\n`
      : `No marked sign-ups of source ${source}: nothing was removed.\n`,
  );
}

/** `remove --reason <reason>`: the sign-ups marked for it, as the marks read now. */
export async function removeReason({ signUps, stderr }: VerbContext, reason: Reason): Promise<void> {
  const removed = await removeForReason(signUps, reason);
  const words = REASONS[reason];
  stderr.write(
    removed > 0
      ? `Removed ${removed} ${removed === 1 ? "sign-up" : "sign-ups"} ${words}.\n`
      : `No sign-ups ${words}: nothing was removed.\n`,
  );
}

/** Removes the sign-ups marked for `reason`; how many. A new reason (marks.ts) fails to compile here until handled. */
async function removeForReason(signUps: SignUps, reason: Reason): Promise<number> {
  switch (reason) {
    case "pace":
      return signUps.removePastPace();
    case "same-mailbox": {
      const { repeats } = await readMarks(signUps);
      return signUps.removeIds([...repeats.keys()]);
    }
    case "disposable":
    case "typo": {
      const { marks } = await readMarks(signUps);
      const domains = [...marks].filter(([, mark]) => mark.reason === reason).map(([domain]) => domain);
      return signUps.removeAtDomains(domains);
    }
    default:
      return unhandled(reason);
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
