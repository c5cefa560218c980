// The sign-ups through Supabase's REST API, with supabase-js as the site uses it (the same calls
// on a real project as locally): the reads and removals of SignUps (rows.ts), each failure put in
// the owner's words (failures.ts).
import type { PostgrestError, SupabaseClient } from "@supabase/supabase-js";
import { describeFailure, TABLE, type Target } from "./failures.ts";
import type { HourCount } from "./growth.ts";
import type {
  DomainCount,
  DomainRow,
  MailboxRow,
  RepeatRow,
  SignUpRow,
  SignUps,
  SourceRow,
  Totals,
} from "./rows.ts";

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
