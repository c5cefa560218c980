// The summary in words: `count`'s lines for a terminal, and `watch`'s Markdown for a scheduled job's
// summary page. Pure: a Summary (summary.ts) in, text out.
import { formatCount, renderChart, type ChartOptions } from "./chart.ts";
import { localDay } from "./growth.ts";
import { REASON_NAMES, REASONS } from "./marks.ts";
import type { SiteAnswer } from "./site.ts";
import type { Summary } from "./summary.ts";

/** What `count` says when there is nothing to count. */
export const EMPTY_LIST = "No sign-ups yet: the list is empty.";

/**
 * What `watch` says instead of the counts when they are not to be shown: a public repository's
 * runs, summaries included, are anyone's to read.
 */
export const COUNTS_PRIVATE =
  "The counts stay private: anyone can read this public repository's runs. See them with " +
  "`npm run sign-ups -- count`, or in the weekly encrypted backup; set the repository variable " +
  "`PUBLISH_COUNTS` to `true` to show them here (README: GitHub's jobs).";

/** The width of a chart that is no terminal's (a file, a pipe, a job's summary). */
export const PIPED_WIDTH = 80;

/** `: 1,023 past a pace, 61 at a disposable domain`, the reasons with none left out; empty for none. */
function reasonsOf({ byReason }: Summary): string {
  const reasons = REASON_NAMES.filter((reason) => byReason[reason] > 0).map(
    (reason) => `${formatCount(byReason[reason])} ${REASONS[reason]}`,
  );
  return reasons.length > 0 ? `: ${reasons.join(", ")}` : "";
}

/** `count`'s lines: the totals, a blank line, the chart's title and its bars. */
export function countLines(summary: Summary, chart: ChartOptions): string[] {
  return [
    `${formatCount(summary.signUps)} ${summary.signUps === 1 ? "sign-up" : "sign-ups"}`,
    `${formatCount(summary.today)} today (since 00:00, ${summary.zone})`,
    `${formatCount(summary.lastWeek)} in the last 7 days`,
    `${formatCount(summary.withPhone)} with a phone (for the discount)`,
    `${formatCount(summary.marked)} marked for review${reasonsOf(summary)}`,
    "",
    summary.chart.title,
    ...renderChart(summary.chart.rows, chart),
  ];
}

/** How the page's own sign-up path answered the publishable key (probe.ts, checkSignUpPath). */
export interface PageCheck {
  status: number;
  /** The check that refused the test address, as the database names it. */
  constraint: string;
}

/** How the site answered (site.ts), why it failed, or null when it is not watched. */
export type SiteReport = SiteAnswer | { failure: string } | null;

/**
 * `watch`'s report, in Markdown (GitHub renders it on the run's page; it reads as text too):
 * the totals, that the project and the page's path answer, the site, and the chart of the days.
 * Without `counts`, neither the totals nor the chart (not even an empty list's): where to see them.
 */
export function watchMarkdown(
  summary: Summary | null,
  page: PageCheck,
  site: SiteReport,
  now: Date,
  zone: string,
  { counts = true } = {},
): string {
  const lines = [`## Sign-ups, ${localDay(now, zone)} (${zone})`, ""];
  if (!counts) lines.push(COUNTS_PRIVATE);
  else if (summary === null) lines.push(EMPTY_LIST);
  else {
    lines.push(
      `- **${formatCount(summary.signUps)}** in all`,
      `- **${formatCount(summary.lastWeek)}** new in the last 7 days (${formatCount(summary.today)} today, since 00:00)`,
      `- **${formatCount(summary.withPhone)}** with a phone (for the discount)`,
      `- **${formatCount(summary.marked)}** marked for review${reasonsOf(summary)}`,
    );
  }
  lines.push(
    "",
    "The project answers: the list was read with the secret key, and the page's own sign-up path " +
      `answered the publishable key as it should (an address the database refuses: HTTP ${page.status}, ` +
      `\`${page.constraint}\`; nothing stored).`,
    "",
    siteLine(site),
  );
  if (counts && summary !== null) {
    lines.push(
      "",
      `### ${summary.chart.title}`,
      "",
      "```text",
      ...renderChart(summary.chart.rows, { width: PIPED_WIDTH, colour: false }),
      "```",
    );
  }
  return `${lines.join("\n")}\n`;
}

/** What the site's look found, in one paragraph. */
function siteLine(site: SiteReport): string {
  if (site === null)
    return "The site is not watched: set the repository variable `SITE_URL` to its address (README: GitHub's jobs).";
  if ("failure" in site) return `**The site fails**: ${site.failure}`;
  const certificate = site.certificate
    ? `; its certificate ends on ${site.certificate.validTo.toISOString().slice(0, 10)}, in ${site.certificate.daysLeft} days`
    : "";
  const warnings = site.warnings.map(({ message }) => ` **Warning**: ${message}`).join("");
  return `The site answers: ${site.url} (HTTP ${site.status}), sending sign-ups to this project${certificate}.${warnings}`;
}
