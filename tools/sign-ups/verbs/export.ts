// `export`: every sign-up as CSV with its marks' reasons, or as a mailing tool imports it
// (mailing-tools.ts), to stdout or to a file replaced only once complete.
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { csvWriter, toolCsvWriter, toUtcIso, type CsvRecord } from "../csv.ts";
import { OwnerCommandError } from "../failures.ts";
import { TOOL_FORMATS, toolRow, type MailingTool } from "../mailing-tools.ts";
import { markDomains, reviewOf } from "../review.ts";
import type { SignUps } from "../rows.ts";
import { writeAtomically } from "../write-atomically.ts";
import type { VerbContext } from "./context.ts";

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

/**
 * Phones read into E.164, dialled from `country` when one is given: phones.ts loaded only now, as
 * only `export --for` needs its rules, which take a while to load.
 */
async function phoneReader(country: string | undefined): Promise<(phone: string) => string | null> {
  const { countryCode, toE164 } = await import("../phones.ts");
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
 * sign-up to a mailbox, by its id; as the export shows them, and as `remove --reason` removes.
 */
export async function readMarks(signUps: SignUps) {
  const [domains, repeats] = await Promise.all([signUps.domainCounts(), signUps.repeats()]);
  return {
    marks: markDomains(domains),
    repeats: new Map(repeats.map(({ id, repeats: earliest }) => [id, earliest])),
  };
}
