// `watch`, for a scheduled job: the list read as `count` reads it, the page's own sign-up path
// checked (probe.ts) and the site looked at (site.ts), all at once, and a report in Markdown.
import { appendFileSync } from "node:fs";
import { DEPLOY_COMMAND } from "../../supabase-cli.ts";
import { oneLine, OwnerCommandError } from "../failures.ts";
import { REFUSED_ADDRESS, type PageAnswer } from "../probe.ts";
import { watchMarkdown } from "../report.ts";
import type { SiteAnswer } from "../site.ts";
import type { VerbContext } from "./context.ts";
import { readSummary } from "./count.ts";

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
  /** Whether the report shows the counts and the chart (a public repository's runs are anyone's to read). */
  counts?: boolean;
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
  { url, checkPage, checkSite, warn = () => {}, summaryFile, counts = true }: WatchOptions,
): Promise<void> {
  const [read, page, site] = await Promise.allSettled([
    readSummary(context),
    checkPage().then(async (answer) => {
      if (!("storedId" in answer)) return answer;
      // Removed at once, whatever the reads do: the row must not stay in the list.
      await context.signUps.removeIds([answer.storedId]);
      throw new OwnerCommandError(
        `The page's sign-up path at ${url} stored "${REFUSED_ADDRESS}", which the database must refuse: its ` +
          "check (private.broken_check) is missing or changed. The row was removed; apply this repository's " +
          `migrations (${DEPLOY_COMMAND}).`,
        "Page's sign-up check missing",
      );
    }),
    checkSite ? checkSite() : Promise.resolve(null),
  ]);
  if (read.status === "rejected") throw read.reason;
  if (page.status === "rejected") throw page.reason;
  const siteReport = site.status === "fulfilled" ? site.value : { failure: oneLine(site.reason) };
  const report = watchMarkdown(read.value, page.value, siteReport, context.now, context.zone, { counts });
  context.stdout.write(report);
  if (summaryFile) appendFileSync(summaryFile, report);
  if (site.status === "rejected") throw site.reason;
  for (const { title, message } of site.value?.warnings ?? []) warn(title, message);
}
