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
  type DomainReason,
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
  const atDomains = (reason: DomainReason) =>
    domains.reduce(
      (sum, { domain, sign_ups }) => sum + (marks.get(domain)?.reason === reason ? sign_ups : 0),
      0,
    );
  // Every reason's count, each named: a new reason in REASONS fails to compile here until counted.
  const byReason: Record<Reason, number> = {
    pace: pastPace,
    disposable: atDomains("disposable"),
    typo: atDomains("typo"),
    "same-mailbox": domains.reduce((sum, { repeats }) => sum + repeats, 0),
  };
  let marked = pastPace;
  for (const { domain, sign_ups, past_pace, repeats, repeats_past_pace } of domains) {
    marked += marks.has(domain) ? sign_ups - past_pace : repeats - repeats_past_pace;
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
  const mark = marks.get(domainOf(row.email));
  const atDomain = (reason: DomainReason) => (mark?.reason === reason ? mark.words : null);
  // Each reason's words or null, each named: a new reason in REASONS fails to compile here until worded.
  const words: Record<Reason, string | null> = {
    pace: row.review,
    disposable: atDomain("disposable"),
    typo: atDomain("typo"),
    "same-mailbox": earliest === undefined ? null : sameMailboxWords(earliest),
  };
  const reasons = REASON_NAMES.map((reason) => words[reason]).filter((reason) => reason !== null);
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
  const atDomains = (reason: DomainReason) =>
    domains.flatMap(({ domain, sign_ups, first_at, last_at, some_emails }) => {
      const mark = marks.get(domain);
      return mark?.reason === reason
        ? [{ reason: mark.words, sign_ups, first_at, last_at, some_emails }]
        : [];
    });
  // Each reason's groups, each named: a new reason in REASONS fails to compile here until grouped.
  const byReason: Record<Reason, MarkedGroup[]> = {
    pace: sources.map(({ source, ...group }) => ({ reason: `past a pace (source ${source})`, ...group })),
    disposable: atDomains("disposable"),
    typo: atDomains("typo"),
    "same-mailbox": mailboxes.map(({ repeats, ...group }) => ({
      reason: sameMailboxWords(repeats),
      ...group,
    })),
  };
  return REASON_NAMES.flatMap((reason) => byReason[reason]).sort(
    (a, b) => Date.parse(b.last_at) - Date.parse(a.last_at) || a.reason.localeCompare(b.reason),
  );
}
