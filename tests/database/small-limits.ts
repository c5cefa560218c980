// The sign-up limits the rules' tests hold in their own databases: an address's at about a
// hundredth of the schema's, so that a bucket fills with a dozen sign-ups. The rules read every
// number from private.sign_up_limits, whatever it is; "the schema's limits" in
// sign-up-limits.test.ts checks the schema's own against the crowds they are sized for.
import type { Database } from "../../tools/local-supabase/database/database.ts";

/**
 * An address's limits at about a hundredth of the schema's, in the same order (each ceiling above
 * every pace, the day's above the hour's): a pace of 4 a minute and 8 a day, ceilings of 12 an
 * hour and 48 a day. A network's stay the schema's: its crowds are a few hundred requests.
 */
export const SMALL_LIMITS = `
  update private.sign_up_limits set max_sign_ups = case kind || ' ' || name
    when 'pace per address per minute' then 4
    when 'pace per address per day' then 8
    when 'ceiling per address per hour' then 12
    when 'ceiling per address per day' then 48
    else max_sign_ups end;`;

/**
 * Forgets every count, as after a quiet day: the paces' table and each ceiling's slots (run as
 * the owner between the tests of one database).
 */
export const FORGET_COUNTS = `
  truncate private.sign_up_sources;
  select pg_catalog.setval(slot, 0, false) from private.sign_up_ceilings, unnest(slots) slot;`;

/** A limit of a limits' table: at most `max` sign-ups per `seconds`. */
export interface Limit {
  max: number;
  seconds: number;
}
export type Limits = Map<string, Limit>;
/** The limits a database's rules go by, by `kind name` (the rules' own numbers). */
export async function limitsOf(db: Database): Promise<Limits> {
  const { rows } = await db.query<{ key: string; max: number; seconds: number }>(
    `select kind || ' ' || name as key, max_sign_ups as max, extract(epoch from window_length)::float8 as seconds
       from private.sign_up_limits`,
  );
  return new Map(rows.map(({ key, max, seconds }) => [key, { max, seconds }]));
}
export const limitIn = (table: Limits, kind: "pace" | "ceiling", name: string): Limit => {
  const found = table.get(`${kind} ${name}`);
  if (!found) throw new Error(`no limit ${kind} ${name}`);
  return found;
};
