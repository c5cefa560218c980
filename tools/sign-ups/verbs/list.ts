// `list`: the newest sign-ups as a table; `list --marked`: the marked ones, a line per group to
// act on (review.ts groups them).
import { formatCount } from "../chart.ts";
import { formatLocal } from "../dates.ts";
import { markDomains, markedGroups, markedTotals } from "../review.ts";
import { formatTable } from "../table.ts";
import type { VerbContext } from "./context.ts";

/** How many rows `list` shows unless told otherwise. */
export const DEFAULT_LIST_LIMIT = 50;

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
