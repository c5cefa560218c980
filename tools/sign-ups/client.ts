// The sign-ups through Supabase's REST API, with supabase-js as the site uses it (the same calls
// on a real project as locally), and what its failures mean for the owner.
import { readdirSync, readFileSync } from "node:fs";
import type { PostgrestError, SupabaseClient } from "@supabase/supabase-js";
import type { HourCount } from "./growth.ts";

const TABLE = "early_access";

/** Every sign-up with its mark: a view for the secret key only. */
const WITH_MARKS = "early_access_with_marks";

/** Marked sign-ups grouped by source. */
const SOURCES = "early_access_sources";

/** The whole list in one row. */
const TOTALS = "early_access_totals";

/** Sign-ups per UTC hour and per quarter of it. */
const HOURS = "early_access_hours";

/** Every email domain's counts, in one row: a JSON array of objects named as DomainCount's fields. */
const DOMAIN_COUNTS = "early_access_domain_counts";

/** Every email domain's first and latest sign-up and two addresses, in one row, as DomainRow's fields. */
const DOMAINS = "early_access_domains";

/** Later sign-ups to the same mailbox as an earlier one. */
const REPEATS = "early_access_repeats";

/** The same, grouped by mailbox. */
const MAILBOXES = "early_access_mailboxes";

/**
 * Rows asked for at once: Supabase's default "Max rows". A project set lower answers with
 * fewer, which the paging below takes in its stride.
 */
const PAGE_SIZE = 1000;

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

/** A failure to tell the owner in one line; nothing was changed. */
export class OwnerCommandError extends Error {}

/** What the command talks to, for its messages. */
export interface Target {
  url: string;
  /** Where the key came from: `SUPABASE_SECRET_KEY`, or the local default. */
  keySource: string;
  /** The role the key acts as: the secret key's service_role (the default), or the page's anon. */
  role?: "service_role" | "anon";
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

/** How many requests of a removal are in flight at once: a few, without flooding the project. */
const REQUESTS_AT_ONCE = 4;

/**
 * How long the values of one `in` list may be, encoded: Supabase's gateway takes about 16 KB of
 * URL and headers together, and a proxy in front may take less. About 100 ids, or as many domains.
 */
const IN_LIST_CHARACTERS = 4000;

/** The values in batches whose encoded `in` list stays within IN_LIST_CHARACTERS. */
export function inBatches(values: string[]): string[][] {
  const batches: string[][] = [];
  let batch: string[] = [];
  let length = 0;
  for (const value of values) {
    // Its encoded length, with a comma and room for the quotes supabase-js may add.
    const size = encodeURIComponent(value).length + 7;
    if (batch.length > 0 && length + size > IN_LIST_CHARACTERS) {
      batches.push(batch);
      batch = [];
      length = 0;
    }
    batch.push(value);
    length += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** Runs `work` for every item, `REQUESTS_AT_ONCE` at a time. */
async function eachAtOnce<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: REQUESTS_AT_ONCE }, worker));
}

export function signUpsClient(client: SupabaseClient, target: Target): SignUps {
  const check = <T>(answer: { data: T; error: PostgrestError | null; status: number }) => {
    if (answer.error) throw describeFailure(answer.error, answer.status, target);
    return answer.data;
  };

  const signUps: SignUps = {
    async totals() {
      const answer = await client.from(TOTALS).select("sign_ups, with_phone, marked, first_at, last_at");
      return (check(answer) as Totals[])[0]!;
    },

    async hours(since) {
      // The chart's window is at most 31 days and 14 hours: fewer rows than a project's max rows
      // (1,000) however long the list.
      const answer = await client
        .from(HOURS)
        .select("starts_at, sign_ups, by_quarter")
        .gte("starts_at", since.toISOString())
        .order("starts_at")
        .limit(PAGE_SIZE);
      return check(answer) as HourCount[];
    },

    sources() {
      return everyPage<SourceRow>((from, to) =>
        client
          .from(SOURCES)
          .select("source, sign_ups, first_at, last_at, some_emails")
          .order("last_at", { ascending: false })
          .order("source")
          .range(from, to),
      );
    },

    async domainCounts() {
      const answer = await client.from(DOMAIN_COUNTS).select("domains");
      return (check(answer) as [{ domains: DomainCount[] }])[0]!.domains;
    },

    async domains() {
      const answer = await client.from(DOMAINS).select("domains");
      return (check(answer) as [{ domains: DomainRow[] }])[0]!.domains;
    },

    repeats() {
      return everyPage<RepeatRow>((from, to) =>
        client
          .from(REPEATS)
          .select("id, email, created_at, repeats")
          .order("created_at")
          .order("id")
          .range(from, to),
      );
    },

    mailboxes() {
      return everyPage<MailboxRow>((from, to) =>
        client
          .from(MAILBOXES)
          .select("repeats, sign_ups, first_at, last_at, some_emails")
          .order("last_at", { ascending: false })
          .order("repeats")
          .range(from, to),
      );
    },

    pages({ since = null, newestFirst, limit = Infinity }) {
      let total: number | null = null;
      async function* read() {
        let offset = 0;
        while (offset < Math.min(limit, total ?? Infinity)) {
          const last = Math.min(offset + PAGE_SIZE, limit) - 1;
          // Created_at then id, a total order: pages neither repeat nor skip a row. Sign-ups that
          // arrive meanwhile sort after the oldest-first export's pages, and past its first count.
          let query = client
            .from(WITH_MARKS)
            .select("id, email, phone, created_at, source, review", {
              count: offset === 0 ? "exact" : undefined,
            })
            .order("created_at", { ascending: !newestFirst })
            .order("id", { ascending: !newestFirst });
          if (since) query = query.gte("created_at", since.toISOString());
          const answer = await query.range(offset, last);
          const rows = check(answer) as SignUpRow[];
          if (offset === 0) total = answer.count ?? 0;
          if (rows.length === 0) return;
          offset += rows.length;
          yield rows;
        }
      }
      return { total: () => total, [Symbol.asyncIterator]: read };
    },

    async remove(email) {
      const answer = await client.from(TABLE).delete().eq("email", email).select("email");
      return (check(answer) as unknown[]).length > 0;
    },

    async removeSource(source) {
      // Through the view, whose source is a subquery of the marks: the sign-ups go, and their
      // marks with them.
      const answer = await client.from(WITH_MARKS).delete().eq("source", source).select("email");
      return (check(answer) as unknown[]).length;
    },

    async removePastPace() {
      // One request: every sign-up whose mark names a source.
      const answer = await client.from(WITH_MARKS).delete().not("source", "is", null).select("email");
      return (check(answer) as unknown[]).length;
    },

    removeAtDomains(domains) {
      return deleteIn(WITH_MARKS, "domain", domains);
    },

    removeIds(ids) {
      return deleteIn(TABLE, "id", ids);
    },
  };
  return signUps;

  /**
   * Deletes the rows whose `column` is one of `values`: one request (`column=in.(…)`) per batch
   * that keeps its address short, the batches a few at a time; how many rows they deleted.
   */
  async function deleteIn(relation: string, column: string, values: string[]): Promise<number> {
    let removed = 0;
    await eachAtOnce(inBatches(values), async (batch) => {
      const answer = await client.from(relation).delete().in(column, batch).select("email");
      removed += (check(answer) as unknown[]).length;
    });
    return removed;
  }

  /** Every row of a read, a page at a time in its total order. */
  async function everyPage<T>(
    read: (
      from: number,
      to: number,
    ) => PromiseLike<{ data: unknown; error: PostgrestError | null; status: number }>,
  ): Promise<T[]> {
    const rows: T[] = [];
    for (let offset = 0; ; offset += PAGE_SIZE) {
      const page = check(await read(offset, offset + PAGE_SIZE - 1)) as T[];
      rows.push(...page);
      if (page.length < PAGE_SIZE) return rows;
    }
  }
}

/** Supabase's status for a request to a paused project (its "HTTP Status Codes" guide). */
const PROJECT_PAUSED = 540;

/** The message for a failed call: what happened, and what to do about it. */
export function describeFailure(
  error: PostgrestError,
  status: number,
  { url, keySource, role = "service_role" }: Target,
): OwnerCommandError {
  const page = role === "anon";
  if (status === 0) {
    // supabase-js puts the cause in `details`: "…Caused by: Error: connect ECONNREFUSED 127.0.0.1:54321 (ECONNREFUSED)".
    const cause = /TimeoutError/.test(error.message)
      ? "no answer in time"
      : (/Caused by: (?:\w*Error: )?(.*?)(?: \([A-Z_]+\))?$/m.exec(error.details ?? "")?.[1] ??
        error.message);
    // A paused project's address stops resolving, as a deleted one's does.
    const unknownProject = cause.includes("ENOTFOUND") && projectRef(url) !== null;
    return new OwnerCommandError(
      `Cannot reach the Supabase API at ${url} (${cause}).` +
        (unknownProject
          ? ` If the address is right, the project may be paused or deleted: see ${dashboard(url)}.`
          : ""),
    );
  }
  if (status === PROJECT_PAUSED) {
    return new OwnerCommandError(
      `The project at ${url} is paused (HTTP 540): it answers nothing, sign-ups from the page included. ` +
        `Resume it at ${dashboard(url)} (Resume project): its data and settings come back. ` +
        "Supabase pauses Free-plan projects after 7 days of low activity.",
    );
  }
  if (error.code === "PGRST205") {
    const missing = /'public\.(\w+)'/.exec(error.message)?.[1] ?? TABLE;
    return new OwnerCommandError(
      `The project at ${url} has no ${missing === TABLE ? "table" : "view"} public.${missing}: apply ` +
        "this repository's migrations (npm run supabase -- db push --remote)" +
        (missing === TABLE ? `, the first being supabase/migrations/${creatingMigration()}.` : "."),
    );
  }
  if (status === 401 && error.message === "Invalid API key") {
    return new OwnerCommandError(
      page
        ? `The API at ${url} refused the key from ${keySource} as invalid, as it refuses the page's sign-ups if the ` +
            "site was built with it: copy the project's publishable key (sb_publishable_…) from the dashboard, " +
            "Project Settings → API Keys, into the site's build settings (and build again) and this job's."
        : `The API at ${url} refused the key from ${keySource} as invalid: copy the project's secret ` +
            "key (sb_secret_…) from the dashboard, Project Settings → API Keys.",
    );
  }
  if (error.code === "42501") {
    return new OwnerCommandError(
      page
        ? `The key from ${keySource} may not add a sign-up at ${url} (${error.message}): every sign-up from the ` +
            "page fails. Grant it back in the SQL editor as supabase/schemas/10_early_access.sql does: " +
            "grant insert (email, phone), select on table public.early_access to anon, authenticated;"
        : `The key from ${keySource} may not do this at ${url} (${error.message}): the owner's ` +
            "command needs the secret key (sb_secret_…), which acts as service_role.",
    );
  }
  const code = error.code ? ` ${error.code}` : "";
  const message = shortened(error.message);
  if (status >= 500) {
    return new OwnerCommandError(
      `The API at ${url} answered ${status}${code}: ${message}. The failure is on the project's side: ` +
        `see its logs at ${dashboard(url)}, and https://status.supabase.com; try again later.`,
    );
  }
  if (page) {
    return new OwnerCommandError(
      `The page's sign-up path at ${url} answered ${status}${code}: ${message}, where the database should ` +
        `refuse the test address with 400 (${REFUSED_BY}): check that this repository's migrations are all ` +
        "applied (npx supabase db push --dry-run lists any missing).",
    );
  }
  return new OwnerCommandError(`The API at ${url} answered ${status}${code}: ${message}`);
}

/** A message on one line of at most 200 characters (an HTML error page can be thousands). */
function shortened(message: string): string {
  const line = message.replace(/\s+/g, " ").trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/**
 * What `watch` sends along the page's own path (the publishable key, as anon): an address the
 * database's first check refuses (private.check_sign_up, supabase/schemas/10_early_access.sql) before
 * anything is stored or any sign-up rule counts it. The refusal proves the key, the insert grant
 * and the trigger's path; a sign-up's own checks run in the same order.
 */
export const REFUSED_ADDRESS = "sign-ups watch: not an address";

/** The check that refuses it, as the database names it. */
export const REFUSED_BY = "early_access_email_check";

/** How the page's path answered: refused as it should be, or (its check missing) stored. */
export type PageAnswer = { status: number; constraint: string } | { storedId: string };

/**
 * Sends REFUSED_ADDRESS as the page sends a sign-up (insert, then read back). A refusal by the
 * database's check is the expected answer; any other failure is thrown, in words for the owner.
 */
export async function checkSignUpPath(client: SupabaseClient, target: Target): Promise<PageAnswer> {
  const answer = await client.from(TABLE).insert({ email: REFUSED_ADDRESS, phone: null }).select();
  if (!answer.error) return { storedId: (answer.data as Array<{ id: string }>)[0]!.id };
  if (
    answer.status === 400 &&
    answer.error.code === "23514" &&
    answer.error.message.includes(`"${REFUSED_BY}"`)
  )
    return { status: answer.status, constraint: REFUSED_BY };
  throw describeFailure(answer.error, answer.status, { ...target, role: "anon" });
}

/** A hosted project's ref, from its URL (`https://<ref>.supabase.co`); null elsewhere. */
function projectRef(url: string): string | null {
  return /^([a-z0-9]+)\.supabase\.co$/.exec(new URL(url).hostname)?.[1] ?? null;
}

/** Where the owner sees the project in Supabase's dashboard. */
function dashboard(url: string): string {
  const ref = projectRef(url);
  return ref ? `https://supabase.com/dashboard/project/${ref}` : "the Supabase dashboard";
}

/** The migration that creates the table, found by its content so that a rename cannot stale it. */
function creatingMigration(): string {
  const folder = new URL("../../supabase/migrations/", import.meta.url);
  const file = readdirSync(folder)
    .sort()
    .find((name) => readFileSync(new URL(name, folder), "utf8").includes(`create table public.${TABLE}`));
  return file ?? "*.sql";
}
