// The marked sign-ups as the owner reviews them: the marks the database wrote for a pace, and
// those the command adds as it reads (marks.ts), put together from what the database grouped:
// each reason's total, one line per group to act on, and each sign-up's reasons in words.
import type { DomainRow, RepeatRow, SignUpRow, SourceRow } from "./client.ts";
import { domainMark, domainOf, REASONS, sameMailboxWords, type DomainMark, type Reason } from "./marks.ts";

/** What the command knows of the marks once it has read the domains and the repeats. */
export interface Marks {
  /** The mark of each domain that earns one. */
  domains: Map<string, DomainMark>;
  /** The earliest address of each later sign-up to the same mailbox, by its id. */
  repeats: Map<string, string>;
}

export function readMarks(domains: Pick<DomainRow, "domain">[], repeats: RepeatRow[]): Marks {
  const marked = new Map<string, DomainMark>();
  for (const { domain } of domains) {
    const mark = domainMark(domain);
    if (mark) marked.set(domain, mark);
  }
  return { domains: marked, repeats: new Map(repeats.map(({ id, repeats: earliest }) => [id, earliest])) };
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
  domains: Pick<DomainRow, "domain" | "sign_ups" | "past_pace">[],
  repeats: RepeatRow[],
  marks: Marks,
): MarkedTotals {
  const byReason = Object.fromEntries(REASONS.map((reason) => [reason, 0])) as Record<Reason, number>;
  byReason.pace = pastPace;
  let marked = pastPace;
  for (const { domain, sign_ups, past_pace } of domains) {
    const mark = marks.domains.get(domain);
    if (!mark) continue;
    byReason[mark.reason] += sign_ups;
    marked += sign_ups - past_pace;
  }
  for (const { email, past_pace } of repeats) {
    byReason["same-mailbox"]++;
    if (!past_pace && !marks.domains.has(domainOf(email))) marked++;
  }
  return { marked, byReason };
}

/** A sign-up's reasons in words, `; ` between them; null for one with none. */
export function reviewOf(row: Pick<SignUpRow, "id" | "email" | "review">, marks: Marks): string | null {
  const earliest = marks.repeats.get(row.id);
  const reasons = [
    row.review,
    marks.domains.get(domainOf(row.email))?.words,
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

/** How many addresses a group shows. */
const SOME = 3;

/**
 * The groups of marked sign-ups, the latest first: each source past a pace, each disposable or
 * mistyped domain, each mailbox reached again.
 */
export function markedGroups(
  sources: SourceRow[],
  domains: DomainRow[],
  repeats: RepeatRow[],
  marks: Marks,
): MarkedGroup[] {
  const groups: MarkedGroup[] = sources.map(({ source, ...group }) => ({
    reason: `past a pace (source ${source})`,
    ...group,
  }));
  for (const { domain, sign_ups, first_at, last_at, some_emails } of domains) {
    const mark = marks.domains.get(domain);
    if (mark) groups.push({ reason: mark.words, sign_ups, first_at, last_at, some_emails });
  }
  // Oldest first, as read: a mailbox's group starts at its first repeat.
  const byMailbox = new Map<string, MarkedGroup>();
  for (const { email, created_at, repeats: earliest } of repeats) {
    const group = byMailbox.get(earliest);
    if (!group) {
      byMailbox.set(earliest, {
        reason: sameMailboxWords(earliest),
        sign_ups: 1,
        first_at: created_at,
        last_at: created_at,
        some_emails: [email],
      });
      continue;
    }
    group.sign_ups++;
    group.last_at = created_at;
    if (group.some_emails.length < SOME) group.some_emails.push(email);
  }
  groups.push(...byMailbox.values());
  return groups.sort(
    (a, b) => Date.parse(b.last_at) - Date.parse(a.last_at) || a.reason.localeCompare(b.reason),
  );
}
