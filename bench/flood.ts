// `npm run bench:flood`: what a script's flood costs the real visitors around it, on a real
// PostgreSQL server that keeps every commit on disk, a fresh one on each major hosted Supabase
// runs (15, then 17), each request run the way the local Supabase runs it (PostgREST's
// transaction: the request's settings with anon's 3 s statement timeout, the insert and its
// read-back), without HTTP in between.
//
// 1. Visitors from random networks at a steady 40 a second on a pool of their own: their p99
//    alone, 15 s before and 15 s after the floods, each on a settled server (pooled: the ratio's
//    denominator, steady when the two agree within 2x), then during three floods one after the
//    other, each offered at 400 a second from a /24 of its own over 50 connections, on a settled
//    server, sent by a client on a thread of its own (flood-client.ts): in one event loop with
//    the flood, the visitors' answers waited behind its answers, and their p99 measured this
//    process's queue. The ratio's numerator is the median of the three floods' p99s: one
//    window's p99 is its four slowest visitors, and a single stall of the machine moved it
//    several-fold from one run to the next. Then the same on a database without the rules (as
//    bench:rules makes it): the slowdown this machine gives any flood.
//    First, on fresh databases: a pool another step left idle closes its connections after 30 s,
//    and 50 backends ending at once stalled a quiet window's visitors.
// 2. A flood of 3,000 at once from one address, 100 at a time, against the schema's ceiling of
//    1,000 an hour: how many it stores (the ceiling, and at most a tenth over it plus its bucket's
//    drip while the flood ran, as the tests hold a client to), and that every other
//    answer is 429 with a Retry-After of at most the hour's drip (the tests prove the same, and
//    that forged headers change nothing, with a ceiling of 12). Then, one at a time: a refusal
//    from that address against a sign-up from a new source, taking turns (medians).
// 3. How much the private tables grow per 1,000 refusals.
//    Beside them, a failure the rules never see (a column the key may not write, refused by
//    PostgreSQL's privileges before any trigger) from new sources: it must cost no more than a
//    refusal, and store nothing.
// 4. Probes about a listed address, 3,000 of each kind from an address of its own: duplicates,
//    bodies of two rows (the listed address first, then second), upserts that ignore duplicates,
//    casts in `select` that fail after the insert (of new addresses, and of the listed one):
//    where the first 429 comes (at the address's hourly ceiling, give or take a tenth: each
//    address is one whose failures' cells no earlier probe's share, so that each kind meets its
//    own count alone; what sharing costs a stranger is step 6's), and how much the tables grow
//    per 1,000 probes (rows rolled back count until vacuumed). Then,
//    counted from nothing, duplicates from 250 addresses of one /24, where the network's ceiling
//    should refuse them.
// 5. A mixed burst from one address and from strangers, at once over 50 connections: upserts
//    (with and without on_conflict), bodies of two rows, duplicates and sign-ups. Nothing may
//    wait for anything in a circle (a deadlock) or past the timeout: no answer but 201, 400,
//    409 and 429.
// 6. Strangers beside a flood: 100 addresses, each of a network of its own, held at their
//    ceilings by duplicates (a tenth past them), and 48 others flooding theirs three times over
//    with sign-ups and duplicates (every ceiling lowered fiftyfold for this, so that holding
//    takes thousands of requests, not hundreds of thousands); then 1,000 fresh visitors from
//    other networks: none may be refused. Then each sends its address again: how many of those
//    duplicates meet 429 rather than "already registered" is the price of the failures' small
//    sketch, printed with no target.
//
// Prints the figures with their targets, per major, and writes them to bench/results/flood.json;
// never fails on them.
import { POSTGRES_MAJORS, SUPERUSER, type PostgresMajor } from "../tools/local-supabase/database/cluster.ts";
import type { Database } from "../tools/local-supabase/database/database.ts";
import { OWNER } from "../tools/local-supabase/database/supabase-project.ts";
import { createPostgrest } from "../tools/local-supabase/postgrest.ts";
import { floodingClient } from "./flood-client.ts";
import {
  newEmail,
  paced,
  randomAddress,
  send,
  signUpRequest,
  warm,
  type Answer,
} from "./sign-up-requests.ts";
import {
  median,
  ms,
  startBenchCluster,
  table,
  verdict,
  withoutRules,
  writeResults,
  writtenOut,
  type BenchCluster,
} from "./support.ts";

const FLOOD_AT_ONCE = 3_000;
const ONE_AT_A_TIME = 300;
const REFUSALS_FOR_GROWTH = 1_000;
const FLOOD_CONNECTIONS = 50;
/** Each flood beside the visitors, from one /24 on a client of its own (flood-client.ts). */
const FLOOD = { perSecond: 400, seconds: 10, connections: FLOOD_CONNECTIONS };
/** How many floods the visitors meet, one after the other. */
const FLOODS = 3;
/** The visitors during each flood, and alone before and after them (the ratio's denominator). */
const DURING = { perSecond: 40, seconds: FLOOD.seconds, connections: 10 };
const ALONE = { ...DURING, seconds: 15 };
/** The two alone windows' p99 may differ this much for their pooled p99 to be a steady denominator. */
const STEADY = 2;
const PROBES_OF_EACH_KIND = 3_000;
const HELD_ADDRESSES = 100;
const FLOODING_ADDRESSES = 48;
/** How much lower every ceiling is for the strangers' scene. */
const SCENE_SCALE = 50;
const STRANGERS = 1_000;

/**
 * The failures' cells a client counts in: in each of its scopes, its column in every row of the
 * sketch (the same in each of the scope's ceilings), as `scope row column`.
 */
async function failureCellsOf(owner: Database, client: string): Promise<string[]> {
  const { rows } = await owner.query<{ cells: string[] }>(
    `select array_agg(distinct concat_ws(' ', n.scope, c.r, c.col)) as cells
       from private.clients_of($1) n
       join private.failure_sketches f on f.per = n.scope and f.charge_order is not null
      cross join lateral unnest(private.sketch_columns(pg_catalog.sha256(n.named), f.sketch_rows, f.sketch_width))
                 with ordinality as c(col, r)`,
    [client],
  );
  return rows[0]!.cells;
}

/**
 * Each kind of probe about a listed address, as the request a script sends, and whether the rules
 * count it (a failure they decide) or never see it (a cast that fails after the statement, of a
 * row the rollback takes back uncounted).
 */
const PROBES: Array<[string, boolean, (listed: string) => Parameters<typeof signUpRequest>[1]]> = [
  ["one-row duplicates", true, (listed) => ({ body: { email: listed } })],
  [
    "two rows, the listed address first",
    true,
    (listed) => ({ body: [{ email: listed }, { email: newEmail() }] }),
  ],
  [
    "two rows, the listed address second",
    true,
    (listed) => ({ body: [{ email: newEmail() }, { email: listed }] }),
  ],
  [
    "upserts ignoring duplicates",
    true,
    (listed) => ({
      body: { email: listed },
      query: "on_conflict=email&select=*",
      prefer: "resolution=ignore-duplicates,return=representation",
    }),
  ],
  ["casts in select, new addresses", false, () => ({ query: "select=email::int" })],
  [
    "casts in select, the listed address",
    true,
    (listed) => ({ body: { email: listed }, query: "select=email::int" }),
  ],
];

/** Forgets every count: the paces' table and every cell of the ceilings' sketches, as after a quiet day. */
const FORGET_COUNTS = `
  truncate private.sign_up_sources;
  select pg_catalog.setval(c.oid::regclass, 0)
    from pg_catalog.pg_class c where c.relnamespace = 'private'::regnamespace and c.relkind = 'S';`;

/**
 * The bytes of data in `schema`: every table's, TOAST's and index's main fork (not the free
 * space and visibility maps, which the server adds on its own as a table ages).
 */
async function bytesOf(owner: Database, schema: "private" | "public"): Promise<number> {
  const { rows } = await owner.query<{ bytes: string }>(
    `select coalesce(sum(pg_catalog.pg_relation_size(c.oid, 'main')), 0)::bigint as bytes
       from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname in ($1, 'pg_toast') and c.relkind in ('r', 'i', 't')
        and (n.nspname = $1 or c.oid in (
              select t.reltoastrelid from pg_catalog.pg_class t join pg_catalog.pg_namespace tn on tn.oid = t.relnamespace
               where tn.nspname = $1))`,
    [schema],
  );
  return Number(rows[0]!.bytes);
}
const privateBytes = (owner: Database) => bytesOf(owner, "private");

const count = (answers: Answer[], test: (status: number) => boolean) =>
  answers.filter(({ status }) => test(status)).length;

/** The visitors' answers alone before the floods, during each, and alone after them; and the floods'. */
interface BesideAFlood {
  before: Answer[];
  during: Answer[][];
  after: Answer[];
  flood: Answer[];
}

/**
 * Visitors from random networks on `database`, on a pool of their own, alone, then during each of
 * the floods, each from a /24 no request came from before, then alone again. Each pool's
 * connections are opened and their plans made first, as a running API's are (`warm`), and take
 * turns from then on (pool.ts): 50 backends starting at once stalled every request for seconds.
 * Before each alone window and each flood after the first, what an earlier step left the server
 * to do (autovacuum's work, a checkpoint's writes) is done, so that alone is alone (without it,
 * one window's p99 was several times the other's) and each flood starts as the first did.
 */
async function visitorsBesideAFlood(cluster: BenchCluster, database: string): Promise<BesideAFlood> {
  const visitors = (await createPostgrest(cluster.pool("authenticator", database, DURING.connections)))
    .handle;
  const superuser = cluster.pool(SUPERUSER, database, 1);
  const settle = async () => {
    await superuser.exec("vacuum analyze");
    await writtenOut(superuser);
  };
  await warm(visitors, DURING.connections, randomAddress);
  await settle();
  const before = await paced(visitors, randomAddress, ALONE);
  const during: Answer[][] = [];
  const flood: Answer[] = [];
  for (let index = 0; index < FLOODS; index++) {
    if (index > 0) await settle();
    const client = await floodingClient({
      url: cluster.url("authenticator", database),
      network: `198.19.${7 + 2 * index}`,
      pace: FLOOD,
      warmFrom: `198.19.${8 + 2 * index}`,
    });
    const [visitorsDuring, floodAnswers] = await Promise.all([
      paced(visitors, randomAddress, DURING),
      client.flood(),
    ]);
    during.push(visitorsDuring);
    flood.push(...floodAnswers);
  }
  await settle();
  const after = await paced(visitors, randomAddress, ALONE);
  return { before, during, after, flood };
}

const p99 = (answers: Answer[]) => {
  const sorted = answers.map(({ ms }) => ms).toSorted((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;
};

/**
 * The visitors' p99 alone (each window's, and pooled) and during the floods (each flood's, and
 * their median), and the ratio of the median to the pooled.
 */
function slowdownOf({ before, during, after }: BesideAFlood) {
  const windows = [p99(before), p99(after)];
  const alone = p99([...before, ...after]);
  const floods = during.map(p99);
  return {
    aloneMs: alone,
    aloneWindowsMs: windows,
    steady: Math.max(...windows) <= STEADY * Math.min(...windows),
    duringMs: median(floods),
    duringFloodsMs: floods,
    slowdown: median(floods) / alone,
  };
}

/** The figures on a fresh server of `major`. */
async function flood(major: PostgresMajor) {
  const cluster = await startBenchCluster(["flood", "without_rules"], major);
  try {
    const owner = cluster.pool(OWNER, "flood", 1);
    await cluster.pool(OWNER, "without_rules", 1).exec(withoutRules("without_rules"));
    // 1. Visitors beside a flood, and beside the same flood without the rules.
    const beside = await visitorsBesideAFlood(cluster, "flood");
    const besideWithout = await visitorsBesideAFlood(cluster, "without_rules");
    const visitors = slowdownOf(beside);
    const floor = slowdownOf(besideWithout);

    const floodHandle = (await createPostgrest(cluster.pool("authenticator", "flood", FLOOD_CONNECTIONS)))
      .handle;

    // 2. A flood from one address, 100 at a time: its ceiling stored, the rest refused.
    const flooder = "198.18.0.1";
    const { rows: ceilings } = await owner.query<{ max: number; seconds: number }>(
      `select max_sign_ups as max, extract(epoch from window_length)::float8 as seconds
         from private.sign_up_limits where kind = 'ceiling' and name = 'per address per hour'`,
    );
    const ceiling = ceilings[0]!;
    const flooded: Answer[] = [];
    const floodStarted = performance.now();
    for (let sent = 0; sent < FLOOD_AT_ONCE; sent += 100) {
      flooded.push(...(await Promise.all(Array.from({ length: 100 }, () => send(floodHandle, flooder)))));
    }
    const firstRefusal = flooded.findIndex(({ status }) => status === 429);
    const stored = flooded.slice(0, firstRefusal).filter(({ status }) => status === 201).length;
    const storedInAll = flooded.filter(({ status }) => status === 201).length;
    // The most a client may store (as the tests hold it): the ceiling and a tenth, one more per
    // drip of its bucket while the flood ran, and one.
    const floodSeconds = (performance.now() - floodStarted) / 1000;
    const mostStored =
      Math.floor(1.1 * ceiling.max) + Math.ceil((floodSeconds * ceiling.max) / ceiling.seconds) + 1;
    const floodRefused = flooded.filter(({ status }) => status === 429);
    const floodOthers = flooded.length - storedInAll - floodRefused.length;
    const drip = Math.ceil(ceiling.seconds / ceiling.max);
    const retryAfters = floodRefused.map(({ retryAfter }) => Number(retryAfter));
    const retryAfterOk = retryAfters.every((seconds) => seconds >= 1 && seconds <= drip);
    const refusals: number[] = [];
    const newSources: number[] = [];
    const uncounted: Answer[] = [];
    // A bucket past its ceiling still drips: one more sign-up fits every few seconds.
    let dripped = 0;
    for (let index = 0; index < ONE_AT_A_TIME; index++) {
      const refusal = await send(floodHandle, flooder);
      const signUp = await send(floodHandle, randomAddress());
      if (![201, 429].includes(refusal.status) || signUp.status !== 201) {
        throw new Error(`Expected 429 (or 201) and 201, got ${refusal.status} and ${signUp.status}`);
      }
      if (refusal.status === 429) refusals.push(refusal.ms);
      else dripped++;
      newSources.push(signUp.ms);
      const forbidden = randomAddress();
      uncounted.push(
        await send(
          floodHandle,
          forbidden,
          signUpRequest(forbidden, { body: { email: newEmail(), id: crypto.randomUUID() } }),
        ),
      );
    }

    // 3. Growth per 1,000 refusals, 50 at a time.
    const before = await privateBytes(owner);
    let refused = 0;
    for (let sent = 0; sent < REFUSALS_FOR_GROWTH; sent += 50) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => send(floodHandle, flooder)));
      refused += answers.filter(({ status }) => status === 429).length;
    }
    const grown = (((await privateBytes(owner)) - before) * 1000) / refused;

    // 4. Probes, each kind from an address of its own, about an address on the list.
    const listed = newEmail();
    await owner.query("insert into public.early_access (email) values ($1)", [listed]);
    const probes: string[][] = [];
    const cellsTaken = new Set<string>();
    let network = 10;
    for (const [kind, counted, probe] of PROBES) {
      let from: string;
      let cells: string[];
      do {
        if (network === 40)
          throw new Error("No /24 of 198.18.10.0 to 198.18.39.0 left with cells of its own");
        from = `198.18.${network++}.1`;
        cells = await failureCellsOf(owner, from);
      } while (cells.some((cell) => cellsTaken.has(cell)));
      for (const cell of cells) cellsTaken.add(cell);
      const grownFrom = (await privateBytes(owner)) + (await bytesOf(owner, "public"));
      const statuses: number[] = [];
      for (let sent = 0; sent < PROBES_OF_EACH_KIND; sent += 50) {
        const answers = await Promise.all(
          Array.from({ length: 50 }, () => send(floodHandle, from, signUpRequest(from, probe(listed)))),
        );
        statuses.push(...answers.map(({ status }) => status));
      }
      const grownBy = (await privateBytes(owner)) + (await bytesOf(owner, "public")) - grownFrom;
      const firstRefusal = statuses.indexOf(429);
      const answered = [...new Set(statuses)].sort().join(", ");
      probes.push([
        kind,
        String(firstRefusal),
        counted
          ? verdict(
              Math.abs(firstRefusal - ceiling.max) <= ceiling.max / 10,
              `${ceiling.max.toLocaleString("en")}, give or take a tenth`,
            )
          : verdict(firstRefusal === -1, "none: never counted"),
        `${((grownBy * 1000) / PROBES_OF_EACH_KIND / 1024).toFixed(1)} KB`,
        answered,
      ]);
    }

    // Duplicates from 250 addresses of one /24 in turn, counted from nothing: the network's
    // ceiling, not an address's.
    await owner.exec(FORGET_COUNTS);
    const networkStatuses: number[] = [];
    for (let sent = 0; sent < 3_550; sent += 50) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, index) => {
          const from = `198.18.40.${1 + ((sent + index) % 250)}`;
          return send(floodHandle, from, signUpRequest(from, { body: { email: listed } }));
        }),
      );
      networkStatuses.push(...answers.map(({ status }) => status));
    }
    const networkFirstRefusal = networkStatuses.indexOf(429);
    const { rows: networkCeiling } = await owner.query<{ max: number }>(
      "select max_sign_ups as max from private.sign_up_limits where kind = 'ceiling' and name = 'per network per hour'",
    );

    // 5. The mixed burst: 600 requests at once, every other from one address.
    await owner.exec(FORGET_COUNTS);
    const mine = newEmail();
    const theirs = Array.from({ length: 5 }, newEmail);
    for (const email of [mine, ...theirs])
      await owner.query("insert into public.early_access (email) values ($1)", [email]);
    const upsert = {
      query: "on_conflict=email&select=*",
      prefer: "resolution=ignore-duplicates,return=representation",
    };
    const shapes = (listedOne: string) => [
      { body: { email: listedOne }, ...upsert },
      { body: [{ email: newEmail() }, { email: listedOne }] },
      { body: [{ email: listedOne }, { email: newEmail() }] },
      { body: { email: listedOne } },
      {},
    ];
    const burst = await Promise.all(
      Array.from({ length: 600 }, (_, index) => {
        const from = index % 2 === 0 ? "198.18.50.1" : `198.18.51.${1 + (index % 250)}`;
        const all = shapes(index % 2 === 0 ? mine : theirs[index % 5]!);
        return send(floodHandle, from, signUpRequest(from, all[index % all.length]));
      }),
    );
    const burstByStatus = Object.entries(Object.groupBy(burst, ({ status }) => status))
      .map(([status, answers]) => `${answers!.length} × ${status}`)
      .join(", ");
    const burstServerErrors = count(burst, (status) => status >= 500);

    // 6. Strangers beside a flood, every ceiling lowered (and the failures' sketch made anew for it).
    await owner.exec(`${FORGET_COUNTS}
      update private.sign_up_limits set max_sign_ups = max_sign_ups / ${SCENE_SCALE} where kind = 'ceiling';
      call private.apply_sign_up_limits();`);
    const sceneCeiling = Math.floor(ceiling.max / SCENE_SCALE);
    const from = (addresses: string[], times: number, email: () => string) =>
      Array.from({ length: times }, () =>
        addresses.map(
          (address) => () => send(floodHandle, address, signUpRequest(address, { body: { email: email() } })),
        ),
      ).flat();
    const inBatches = async (requests: Array<() => Promise<Answer>>) => {
      const answers: Answer[] = [];
      for (let sent = 0; sent < requests.length; sent += 50) {
        answers.push(...(await Promise.all(requests.slice(sent, sent + 50).map((request) => request()))));
      }
      return answers;
    };
    const held = Array.from({ length: HELD_ADDRESSES }, (_, index) => `198.20.${index}.1`);
    const flooding = Array.from({ length: FLOODING_ADDRESSES }, (_, index) => `198.21.${index}.1`);
    await inBatches([
      ...from(held, Math.ceil(1.1 * sceneCeiling), () => listed),
      ...from(flooding, 3 * sceneCeiling, newEmail),
      ...from(flooding, 3 * sceneCeiling, () => listed),
    ]);
    const strangerAddresses = Array.from(
      { length: STRANGERS },
      (_, index) => `100.${64 + (index >> 8)}.${index & 255}.1`,
    );
    const strangerEmails = strangerAddresses.map(() => newEmail());
    const strangers = await inBatches(
      strangerAddresses.map(
        (address, index) => () =>
          send(floodHandle, address, signUpRequest(address, { body: { email: strangerEmails[index] } })),
      ),
    );
    const strangersRefused = count(strangers, (status) => status !== 201);
    const again = await inBatches(
      strangerAddresses.map(
        (address, index) => () =>
          send(floodHandle, address, signUpRequest(address, { body: { email: strangerEmails[index] } })),
      ),
    );
    const duplicatesMet429 = count(again, (status) => status === 429);
    const duplicatesOther = count(again, (status) => status !== 429 && status !== 409);

    const refusalCost = median(refusals) / median(newSources);
    const uncountedCost = median(uncounted.map(({ ms }) => ms)) / median(refusals);
    const uncountedOther = count(uncounted, (status) => status !== 401 && status !== 403);
    const floodSlowest = Math.max(...beside.flood.map(({ ms }) => ms));
    const floodOther = count(beside.flood, (status) => status !== 201 && status !== 429);
    console.log(
      `\nPostgreSQL ${major}: one address stored ${stored} before its first refusal; ${ONE_AT_A_TIME} of each, one at a time ` +
        `(${dripped} of its sign-ups fitted as its bucket drained); ` +
        `visitors ${DURING.perSecond}/s for ${ALONE.seconds} s alone, then ${DURING.seconds} s during each of ${FLOODS} floods, then ${ALONE.seconds} s alone:\n\n` +
        table(
          ["", "figure", "target"],
          [
            [
              `a flood of ${FLOOD_AT_ONCE.toLocaleString("en")} at once from one address: stored`,
              String(storedInAll),
              verdict(
                storedInAll >= ceiling.max && storedInAll <= mostStored,
                `${ceiling.max.toLocaleString("en")} to ${mostStored.toLocaleString("en")}: a tenth over, and the drip`,
              ),
            ],
            [
              "its other answers",
              `${floodRefused.length} × 429, ${floodOthers} other`,
              `${floodOthers === 0 ? "PASS" : "MISS"} (only 429)`,
            ],
            [
              "their Retry-After",
              `${Math.min(...retryAfters)} to ${Math.max(...retryAfters)} s`,
              `${retryAfterOk ? "PASS" : "MISS"} (1 to ${drip} s, the hour's drip)`,
            ],
            [
              "a refusal (median)",
              ms(median(refusals)),
              `${refusalCost.toFixed(2)}× a sign-up ${refusalCost <= 1 ? "PASS" : "MISS"} (≤ 1×)`,
            ],
            ["a new source's sign-up (median)", ms(median(newSources)), ""],
            [
              "a column the key may not write (median), from new sources",
              `${ms(median(uncounted.map(({ ms }) => ms)))}, ${uncountedOther} not refused`,
              `${uncountedCost.toFixed(2)}× a refusal ${verdict(uncountedCost <= 1 && uncountedOther === 0, "≤ 1×, all refused")}`,
            ],
            [
              `private tables' growth per ${REFUSALS_FOR_GROWTH.toLocaleString("en")} refusals`,
              `${(grown / 1024).toFixed(1)} KB`,
              `${grown < 1024 ? "PASS" : "MISS"} (< 1 KB)`,
            ],
            [
              "visitors' p99, alone (before and after the floods, pooled)",
              `${ms(visitors.aloneMs)} (${visitors.aloneWindowsMs.map(ms).join(", ")})`,
              verdict(visitors.steady, `steady: the two within ${STEADY}×`),
            ],
            [
              `visitors' p99, during ${FLOODS} floods of ${FLOOD.perSecond}/s, each from a /24 (median)`,
              `${ms(visitors.duringMs)} (${visitors.duringFloodsMs.map(ms).join(", ")})`,
              `${visitors.slowdown.toFixed(1)}× ${verdict(visitors.slowdown <= 5, "≤ 5×")}`,
            ],
            [
              "the same without the rules (the machine's own): alone, during",
              `${ms(floor.aloneMs)} (${floor.aloneWindowsMs.map(ms).join(", ")}), ${ms(floor.duringMs)} (${floor.duringFloodsMs.map(ms).join(", ")})`,
              `${floor.slowdown.toFixed(1)}×`,
            ],
            [
              "the floods' answers",
              `${count(beside.flood, (status) => status === 201)} × 201, ${count(beside.flood, (status) => status === 429)} × 429, ${floodOther} other`,
              `${floodOther === 0 ? "PASS" : "MISS"} (only 201 and 429)`,
            ],
            [
              "the floods' slowest answer",
              ms(floodSlowest),
              `${floodSlowest <= 1000 ? "PASS" : "MISS"} (≤ 1 s)`,
            ],
            [
              "visitors not stored",
              String(
                count(
                  [...beside.before, ...beside.during.flat(), ...beside.after],
                  (status) => status !== 201,
                ),
              ),
              "",
            ],
          ],
        ) +
        `\n\n${PROBES_OF_EACH_KIND.toLocaleString("en")} probes of each kind about a listed address, 50 at a time, from one address:\n\n` +
        table(["", "the first 429 at", "target", "growth per 1,000 (tables, indexes)", "answers"], probes) +
        `\n\nDuplicates from 250 addresses of one /24: the first 429 at ${networkFirstRefusal} ` +
        `(the network's hourly ceiling: ${networkCeiling[0]!.max}) ` +
        `${Math.abs(networkFirstRefusal - networkCeiling[0]!.max) <= networkCeiling[0]!.max / 10 ? "PASS" : "MISS"} (within a tenth of it).` +
        `\nA mixed burst of 600 at once over ${FLOOD_CONNECTIONS} connections: ${burstByStatus}; ` +
        `${burstServerErrors} server errors ${burstServerErrors === 0 ? "PASS" : "MISS"} (0).` +
        `\nBeside ${HELD_ADDRESSES} addresses held at their ceilings by duplicates and ${FLOODING_ADDRESSES} flooding theirs ` +
        `(ceilings lowered ${SCENE_SCALE}-fold), ${STRANGERS.toLocaleString("en")} fresh visitors: ${strangersRefused} not stored ` +
        `${verdict(strangersRefused === 0, "0")}; their addresses sent again: ${duplicatesMet429} met 429 rather than 409 ` +
        `(${((100 * duplicatesMet429) / STRANGERS).toFixed(1)}%, the failures' sketch's price), ${duplicatesOther} other.`,
    );
    return {
      storedByAFloodOf3000: storedInAll,
      mostStoredByAFloodOf3000: mostStored,
      floodOtherAnswers: floodOthers,
      retryAfterSeconds: [Math.min(...retryAfters), Math.max(...retryAfters)],
      refusalMs: median(refusals),
      newSourceMs: median(newSources),
      refusalOverSignUp: refusalCost,
      uncountedFailureOverRefusal: uncountedCost,
      growthPer1000RefusalsBytes: grown,
      visitorsP99AloneMs: visitors.aloneMs,
      visitorsP99AloneWindowsMs: visitors.aloneWindowsMs,
      visitorsDenominatorSteady: visitors.steady,
      visitorsP99DuringFloodMs: visitors.duringMs,
      visitorsP99DuringEachFloodMs: visitors.duringFloodsMs,
      visitorsSlowdown: visitors.slowdown,
      withoutTheRules: {
        visitorsP99AloneMs: floor.aloneMs,
        visitorsP99AloneWindowsMs: floor.aloneWindowsMs,
        visitorsP99DuringFloodMs: floor.duringMs,
        visitorsP99DuringEachFloodMs: floor.duringFloodsMs,
        visitorsSlowdown: floor.slowdown,
      },
      floodSlowestMs: floodSlowest,
      probesFirst429: Object.fromEntries(probes.map(([kind, first]) => [kind, Number(first)])),
      networkDuplicatesFirst429: networkFirstRefusal,
      burstServerErrors,
      strangersNotStored: strangersRefused,
      strangersDuplicatesMet429: duplicatesMet429,
    };
  } finally {
    await cluster.close();
  }
}

const results: Record<string, object> = {};
for (const major of POSTGRES_MAJORS) results[`PostgreSQL ${major}`] = await flood(major);
await writeResults("flood", {
  targets: {
    refusalOverSignUp: 1,
    uncountedFailureOverRefusal: 1,
    visitorsSlowdown: 5,
    strangersNotStored: 0,
  },
  ...results,
});
