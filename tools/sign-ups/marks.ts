// Why a sign-up is marked for the owner's review, beyond its pace: an address that looks
// undeliverable (a disposable domain, a likely typo of a common one) or doubled (the same mailbox
// as an earlier sign-up, supabase/schemas/50_addresses.sql). Never a refusal: the page stores
// every such sign-up, and the owner's command marks it when it reads the list. That is why the
// domain lists live here, from npm, and not in the database: `npm update` brings their new
// releases to the next run, with no migration, and the visitor's request never waits on them.
import { run as suggestDomain } from "@zootools/email-spell-checker";
import mailchecker from "mailchecker";

/** mailchecker's disposable domains: about 55,000, kept current by its maintainers, released often. */
const disposableDomains = mailchecker.blacklist();

/** The reasons a sign-up may be marked, as `remove --reason` names them. */
export const REASONS = ["pace", "disposable", "typo", "same-mailbox"] as const;
export type Reason = (typeof REASONS)[number];

/** Each reason as `count` and `remove` word its sign-ups (`3 past a pace`). */
export const REASON_TOTALS: Record<Reason, string> = {
  pace: "past a pace",
  disposable: "at a disposable domain",
  typo: "at a likely mistyped domain",
  "same-mailbox": "to the same mailbox as an earlier one",
};

/** What the domain of an address says about it; null for nothing. */
export interface DomainMark {
  reason: "disposable" | "typo";
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
 * one domain into the other, counted only as far as the suggester asks: 0, 1, or 2 for more.
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
 * null for a common domain itself, a real provider beside one, and anything further.
 */
export function likelyTypoOf(domain: string): string | null {
  if (REAL_NEIGHBOURS.has(domain)) return null;
  // Whole domains only: the library's guesses at a second-level or top-level part alone
  // (yahoo.com.br → yahoo.com) take real domains for typos.
  const suggestion = suggestDomain({
    email: `x@${domain}`,
    domains: COMMON_DOMAINS,
    secondLevelDomains: [],
    topLevelDomains: [],
    domainThreshold: 1,
    distanceFunction: edits,
  });
  return suggestion?.domain ?? null;
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
