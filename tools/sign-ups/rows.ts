// The rows the owner's command reads, as the database's views name their columns, and what it
// asks of the sign-ups (SignUps): client.ts answers it through Supabase's REST API, the tests with
// stand-ins of their own.
import type { HourCount } from "./growth.ts";

export interface SignUpRow {
  id: string;
  email: string;
  phone: string | null;
  /** As PostgREST writes it: `2026-11-22T01:31:17.336+00:00`. */
  created_at: string;
  /** For a sign-up past a normal pace: its source's short keyed id; null otherwise. */
  source: string | null;
  /** For a sign-up past a normal pace: which pace, and by how much; null otherwise. */
  review: string | null;
}

/** The marked sign-ups of one source. */
export interface SourceRow {
  source: string;
  sign_ups: number;
  first_at: string;
  last_at: string;
  /** The addresses of its first few sign-ups. */
  some_emails: string[];
}

/** How many signed up at one email domain. */
export interface DomainCount {
  domain: string;
  sign_ups: number;
  /** Of them, marked past a pace. */
  past_pace: number;
  /** Of them, later sign-ups to a mailbox reached before (at a provider that ignores dots or tags). */
  repeats: number;
  /** Of those, marked past a pace. */
  repeats_past_pace: number;
}

/** The sign-ups at one email domain. */
export interface DomainRow {
  domain: string;
  sign_ups: number;
  first_at: string;
  last_at: string;
  /** Two of its addresses: the first and the last in alphabetical order (one if it has one). */
  some_emails: string[];
}

/** A sign-up that reaches the same mailbox as an earlier one. */
export interface RepeatRow {
  id: string;
  email: string;
  created_at: string;
  /** The earliest sign-up's address to that mailbox. */
  repeats: string;
}

/** The later sign-ups to one mailbox. */
export interface MailboxRow {
  /** The earliest sign-up's address to it. */
  repeats: string;
  sign_ups: number;
  first_at: string;
  last_at: string;
  /** The addresses of its first few later sign-ups. */
  some_emails: string[];
}

/** The whole list in one row, counted by the database. */
export interface Totals {
  sign_ups: number;
  /** Those the discount is for. */
  with_phone: number;
  /** Those marked past a pace (the marks the database writes as they sign up). */
  marked: number;
  /** The first and the latest sign-up; null for an empty list. */
  first_at: string | null;
  last_at: string | null;
}

export interface ReadOptions {
  /** Only sign-ups from this instant on. */
  since?: Date | null;
  newestFirst: boolean;
  /** At most this many rows; all when absent. */
  limit?: number;
}

export interface SignUps {
  /** How many signed up, left a phone, are marked; the first and latest sign-up. */
  totals(): Promise<Totals>;
  /** Sign-ups per UTC hour from the hour of `since` on, oldest first (hours without any left out). */
  hours(since: Date): Promise<HourCount[]>;
  /** The sources of marked sign-ups, the latest first. */
  sources(): Promise<SourceRow[]>;
  /** The rows, a page at a time, in a total order; `total` is known once the first page is in. */
  pages(options: ReadOptions): {
    total: () => number | null;
    [Symbol.asyncIterator](): AsyncIterator<SignUpRow[]>;
  };
  /** Every email domain's counts, in one read. */
  domainCounts(): Promise<DomainCount[]>;
  /** Every email domain with its first and latest sign-up and two addresses, in one read. */
  domains(): Promise<DomainRow[]>;
  /** Every later sign-up to the same mailbox as an earlier one, oldest first. */
  repeats(): Promise<RepeatRow[]>;
  /** The same, one row per mailbox, the latest first. */
  mailboxes(): Promise<MailboxRow[]>;
  /** Deletes the row of this (normalised) address; whether there was one. */
  remove(email: string): Promise<boolean>;
  /** Deletes the marked sign-ups of this source; how many. */
  removeSource(source: string): Promise<number>;
  /** Deletes every sign-up marked past a pace; how many. */
  removePastPace(): Promise<number>;
  /** Deletes every sign-up at these domains; how many. */
  removeAtDomains(domains: string[]): Promise<number>;
  /** Deletes these sign-ups, by id; how many. */
  removeIds(ids: string[]): Promise<number>;
}
