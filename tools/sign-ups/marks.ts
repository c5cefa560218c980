// Why a sign-up is marked for the owner's review: every reason in one list (REASONS below), and
// the reasons decided here, from a sign-up's domain. A mark is never a refusal: the page stores
// every such sign-up, and the owner's command shows the marks as it reads the list.
import mailchecker from "mailchecker";

/** mailchecker's disposable domains: about 55,000, kept current by its maintainers, released often. */
const disposableDomains = mailchecker.blacklist();

/**
 * Every reason a sign-up may be marked, as `remove --reason` names them, in the order `count`
 * lists them, with how `count` and `remove` word its sign-ups (`3 past a pace`). The one list: a
 * new reason starts here, and `npm run check` then names every place that must handle it (each a
 * `Record<Reason, …>` or a `switch` ending in `unhandled`: review.ts counts, words and groups it,
 * verbs/remove.ts removes it, domainMark below decides a domain's).
 */
export const REASONS = {
  // The database's, as it stores the sign-up (supabase/schemas/30_marks.sql): only the request
  // knows its client's address, and only at that instant how fast that address signs up.
  pace: "past a pace",
  // This command's, as it reads the list (isDisposable, domainMark below): the lists change with
  // their packages' releases, never in a migration, and a visitor's sign-up never waits on them.
  disposable: "at a disposable domain",
  typo: "at a likely mistyped domain",
  // The database's grouping, when read (supabase/schemas/50_addresses.sql): which sign-up reached
  // a mailbox first is a question about the whole list.
  "same-mailbox": "to the same mailbox as an earlier one",
} as const;

export type Reason = keyof typeof REASONS;

/** The reasons' names, in REASONS' order. */
export const REASON_NAMES = Object.keys(REASONS) as Reason[];

/**
 * The `default` of a `switch` over the reasons: it compiles only when every reason has its
 * `case`, so that a new reason in REASONS names each place that must handle it (`npm run check`).
 */
export function unhandled(reason: never): never {
  throw new Error(`No handling for the reason ${String(reason)}`);
}

/** The reasons decided from a sign-up's domain alone (domainMark below). */
export type DomainReason = Extract<Reason, "disposable" | "typo">;

/** What the domain of an address says about it; null for nothing. */
export interface DomainMark {
  reason: DomainReason;
  /** In words, as a mark reads: `a disposable domain (mailinator.com)`. */
  words: string;
}

/** `ada@example.com` → `example.com` (an address has one `@`: the database refuses any other). */
export function domainOf(email: string): string {
  return email.slice(email.indexOf("@") + 1);
}

/**
 * Relays that forward to the person's own inbox, which the disposable list names too: mail
 * sent there arrives, and the person chose the relay to keep their address private.
 */
const FORWARDING_RELAYS = new Set([
  "duck.com",
  "mozmail.com",
  "relay.firefox.com",
  "passmail.net",
  "passmail.com",
  "passinbox.com",
  "simplelogin.com",
  "slmail.me",
  "aleeas.com",
  "anonaddy.com",
  "anonaddy.me",
  "addy.io",
]);

/** Whether the domain, or a domain it is part of (`x.mailinator.com`), is a disposable one. */
export function isDisposable(domain: string): boolean {
  const labels = domain.split(".");
  for (let start = 0; start < labels.length; start++) {
    const part = labels.slice(start).join(".");
    if (FORWARDING_RELAYS.has(part)) return false;
    if (disposableDomains.has(part)) return true;
  }
  return false;
}

/**
 * The common domains a typo is suggested for: the largest mailbox providers whose name has five
 * letters or more. A shorter one (me.com, aol.com, gmx.de) is one letter away from many real
 * companies' domains (ge.com, aig.com), and a company's own domain is no typo.
 */
const COMMON_DOMAINS = [
  "gmail.com",
  "googlemail.com",
  "yahoo.com",
  "yahoo.co.uk",
  "yahoo.fr",
  "hotmail.com",
  "hotmail.co.uk",
  "hotmail.fr",
  "outlook.com",
  "icloud.com",
  "protonmail.com",
  "comcast.net",
  "verizon.net",
  "sbcglobal.net",
  "bellsouth.net",
  "btinternet.com",
];

/** Real providers one letter away from a common domain: never taken for its typo. */
const REAL_NEIGHBOURS = new Set(["email.com", "mail.com", "ymail.com"]);

/**
 * How many single-letter edits (a letter added, dropped, changed, or two neighbours swapped) turn
 * one domain into the other, counted only as far as a typo needs: 0, 1, or 2 for more.
 * In one pass, as tens of thousands of domains are checked at each run.
 */
function edits(a: string, b: string): number {
  if (a === b) return 0;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  if (long.length - short.length > 1) return 2;
  let start = 0;
  while (start < short.length && short[start] === long[start]) start++;
  if (short.length < long.length) return short.slice(start) === long.slice(start + 1) ? 1 : 2;
  if (short.slice(start + 1) === long.slice(start + 1)) return 1;
  const swapped = short[start] === long[start + 1] && short[start + 1] === long[start];
  return swapped && short.slice(start + 2) === long.slice(start + 2) ? 1 : 2;
}

/**
 * The common domain this one is likely a typo of (`gmial.com` → `gmail.com`), one edit away;
 * null for a common domain itself, a real provider beside one, and anything further. Whole
 * domains only: a guess at a second-level or top-level part alone (yahoo.com.br → yahoo.com)
 * takes real domains for typos.
 */
export function likelyTypoOf(domain: string): string | null {
  if (REAL_NEIGHBOURS.has(domain) || COMMON_DOMAINS.includes(domain)) return null;
  return COMMON_DOMAINS.find((common) => edits(domain, common) === 1) ?? null;
}

/**
 * The mark a domain earns, if any. A likely typo is named as such even where the disposable list
 * names it too (it lists `gmial.com`, whose mail someone else receives): the suggestion is what
 * the owner can act on.
 */
export function domainMark(domain: string): DomainMark | null {
  const typo = likelyTypoOf(domain);
  if (typo) return { reason: "typo", words: `a likely typo of ${typo} (${domain})` };
  if (isDisposable(domain)) return { reason: "disposable", words: `a disposable domain (${domain})` };
  return null;
}

/** The mark of a later sign-up to the same mailbox, in words. */
export function sameMailboxWords(earliest: string): string {
  return `the same mailbox as ${earliest}`;
}
