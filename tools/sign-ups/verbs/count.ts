// `count`: the totals and a chart per day or per hour, from the database's three reads
// (summary.ts computes, report.ts words); `watch` reports the same summary.
import { countLines, EMPTY_LIST, PIPED_WIDTH } from "../report.ts";
import { hoursSince, summarize, type Summary } from "../summary.ts";
import type { VerbContext } from "./context.ts";

/** The three reads a summary needs, at once, and the summary; null for an empty list. */
export async function readSummary(
  { signUps, now, zone }: VerbContext,
  byHour = false,
): Promise<Summary | null> {
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
