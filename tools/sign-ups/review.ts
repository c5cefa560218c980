// The marked sign-ups as the owner reviews them: the marks the database wrote for a pace, and
// those the command adds as it reads (marks.ts), put together from what the database grouped:
// each reason's total, one line per group to act on, and each sign-up's reasons in words.
import type { DomainCount, DomainRow, MailboxRow, SignUpRow, SourceRow } from "./rows.ts";
import {
  domainMark,
  domainOf,
  REASON_NAMES,
  sameMailboxWords,
  type DomainMark,
  type Reason,
} from "./marks.ts";

/** The mark of each domain that earns one. */
export function markDomains(domains: DomainCount[]): Map<string, DomainMark> {
  const marked = new Map<string, DomainMark>();
  for (const { domain } of domains) {
    const mark = domainMark(domain);
    if (mark) marked.set(domain, mark);
  }
  return marked;
}

export interface MarkedTotals {
  /** Sign-ups with at least one reason, each counted once. */
  marked: number;
  byReason: Record<Reason, number>;
}

/**
 * How many are marked, and for each reason. A sign-up may have several (a dotted Gmail variant
 * sent past a pace): each reason counts it, the total once. `pastPace` is the database's count.
 */
export function markedTotals(
  pastPace: number,
  domains: DomainCount[],
  marks: Map<string, DomainMark>,
): MarkedTotals {
  const byReason = Object.fromEntries(REASON_NAMES.map((reason) => [reason, 0])) as Record<Reason, number>;
  byReason.pace = pastPace;
  let marked = pastPace;
  for (const { domain, sign_ups, past_pace, repeats, repeats_past_pace } of domains) {
    byReason["same-mailbox"] += repeats;
    const mark = marks.get(domain);
    if (mark) {
      byReason[mark.reason] += sign_ups;
      marked += sign_ups - past_pace;
    } else {
      marked += repeats - repeats_past_pace;
    }
  }
  return { marked, byReason };
}

/**
 * A sign-up's reasons in words, `; ` between them; null for one with none. `repeats` holds the
 * earliest address of each later sign-up to a mailbox, by its id.
 */
export function reviewOf(
  row: Pick<SignUpRow, "id" | "email" | "review">,
  marks: Map<string, DomainMark>,
  repeats: Map<string, string>,
): string | null {
  const earliest = repeats.get(row.id);
  const reasons = [
    row.review,
    marks.get(domainOf(row.email))?.words,
    earliest === undefined ? undefined : sameMailboxWords(earliest),
  ].filter((reason) => reason != null);
  return reasons.length > 0 ? reasons.join("; ") : null;
}

/** Marked sign-ups that the owner acts on together: one source, one domain, one mailbox. */
export interface MarkedGroup {
  reason: string;
  sign_ups: number;
  first_at: string;
  last_at: string;
  some_emails: string[];
}

/**
 * The groups of marked sign-ups, the latest first: each source past a pace, each disposable or
 * mistyped domain, each mailbox reached again.
 */
export function markedGroups(
  sources: SourceRow[],
  domains: DomainRow[],
  mailboxes: MailboxRow[],
  marks: Map<string, DomainMark>,
): MarkedGroup[] {
  const groups: MarkedGroup[] = [
    ...sources.map(({ source, ...group }) => ({ reason: `past a pace (source ${source})`, ...group })),
    ...domains.flatMap(({ domain, sign_ups, first_at, last_at, some_emails }) => {
      const mark = marks.get(domain);
      return mark ? [{ reason: mark.words, sign_ups, first_at, last_at, some_emails }] : [];
    }),
    ...mailboxes.map(({ repeats, ...group }) => ({ reason: sameMailboxWords(repeats), ...group })),
  ];
  return groups.sort(
    (a, b) => Date.parse(b.last_at) - Date.parse(a.last_at) || a.reason.localeCompare(b.reason),
  );
}
