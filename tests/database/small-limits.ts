// The sign-up limits the rules' tests hold in their own databases: an address's at about a
// hundredth of the schema's, so that a bucket fills with a dozen sign-ups. The rules read every
// number from private.sign_up_limits, whatever it is; "the schema's limits" in
// sign-up-limits.test.ts checks the schema's own against the crowds they are sized for.
import type { Database } from "../../tools/local-supabase/database/database.ts";

/**
 * What a change of the limits or the scopes runs in its transaction, as a migration does: the
 * scopes' buckets and the failures' sketches made to follow it (a commit without it is refused).
 */
export const FOLLOW = "call private.apply_sign_up_limits();";

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
    else max_sign_ups end;
  ${FOLLOW}`;

/**
 * The small limits, and a network's ceilings at a hundredth of the schema's too (20 an hour, 100
 * a day), counted in one shard, so that a network's requests meet its ceiling within a few dozen,
 * exactly (a shard holds its share of a ceiling: of 20, in 16 shards, about one).
 */
export const SMALL_NETWORK_CEILINGS = `${SMALL_LIMITS}
  update private.sign_up_limits set max_sign_ups = max_sign_ups / 100 where kind = 'ceiling' and per = 'network';
  update private.sign_up_scopes set shards = 1 where name = 'network';
  ${FOLLOW}`;

/**
 * The small limits, and a network's small too, for the buckets over time: a pace of 10 (below
 * the address's hourly ceiling), ceilings above twice the address's.
 */
export const SMALL_NETWORK_LIMITS = `${SMALL_LIMITS}
  update private.sign_up_limits set max_sign_ups = case kind || ' ' || name
    when 'pace per network per hour' then 10
    when 'ceiling per network per hour' then 48
    when 'ceiling per network per day' then 144
    else max_sign_ups end;
  ${FOLLOW}`;

/**
 * The schema's limits with its ceilings at a fiftieth, in their proportions (an address's 20 an
 * hour and 60 a day, a network's 40 and 200), a network counted in one shard, so that a flood
 * from many clients meets them within a few thousand requests, and a tenth of a ceiling is still
 * two requests.
 */
export const FLOOD_LIMITS = `
  update private.sign_up_limits set max_sign_ups = max_sign_ups / 50 where kind = 'ceiling';
  update private.sign_up_scopes set shards = 1 where name = 'network';
  ${FOLLOW}`;

/** Paces of one and ceilings of two: each kind of mark and refusal within a few requests. */
export const TINY_LIMITS = `
  update private.sign_up_limits set max_sign_ups = case kind when 'pace' then 1 else 2 end;
  ${FOLLOW}`;

/**
 * The schema's limits with a pace of one, so that sign-ups are marked, an address's hourly
 * ceiling of 3, for its sign-ups and for its failures, and a source forgotten by every sign-up
 * that adds one: every statement of the rules runs within a few requests.
 */
export const EVERY_STEP = `
  update private.sign_up_limits set max_sign_ups = 1 where kind = 'pace';
  update private.sign_up_limits set max_sign_ups = 3 where kind = 'ceiling' and name = 'per address per hour';
  update private.sign_up_counting set forget_one_in = 1;
  ${FOLLOW}`;

/**
 * Forgets every count, as after a quiet day: the paces' table and every cell of the ceilings'
 * sketches, the sequences of `private` (run as the owner between the tests of one database).
 */
export const FORGET_COUNTS = `
  truncate private.sign_up_sources;
  select pg_catalog.setval(c.oid::regclass, 0)
    from pg_catalog.pg_class c where c.relnamespace = 'private'::regnamespace and c.relkind = 'S';`;

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

/**
 * The most a client may have let through a ceiling in `seconds`: the ceiling and a tenth (the
 * rules' promise), plus what its bucket drains meanwhile, one per drip, and one more.
 */
export const mostThrough = (seconds: number, { max, seconds: window }: Limit) =>
  Math.floor(1.1 * max) + Math.ceil((seconds * max) / window) + 1;
