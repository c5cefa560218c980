// `npm run bench:flood`: what a script's flood costs the real visitors around it, on a real
// PostgreSQL server that keeps every commit on disk, a fresh one on each major hosted Supabase
// runs (15, then 17), each request run the way the local Supabase runs it (PostgREST's
// transaction: the request's settings with anon's 3 s statement timeout, the insert and its
// read-back), without HTTP in between.
//
// 1. A flood of 3,000 at once from one address, 100 at a time, against the schema's ceiling of
//    1,000 an hour: how many it stores (between the ceiling and twice it), and that every other
//    answer is 429 with a Retry-After of at most the hour's drip (the tests prove the same, and
//    that forged headers change nothing, with a ceiling of 12). Then, one at a time: a refusal
//    from that address against a sign-up from a new source, taking turns (medians).
// 2. How much the private tables grow per 1,000 refusals.
//    Beside them, a failure the rules never see (a column the key may not write, refused by
//    PostgreSQL's privileges before any trigger) from new sources: it must cost no more than a
//    refusal, and store nothing.
// 3. Visitors from random networks at a steady 20 a second on a pool of their own: their p99
//    alone (before and after the flood, pooled, so that one slow moment does not make the
//    ratio), then during a flood offered at 400 a second from one /24 over 50 connections.
// 4. Probes about a listed address, 3,000 of each kind from an address of its own: duplicates,
//    bodies of two rows (the listed address first, then second), upserts that ignore duplicates,
//    casts in `select` that fail after the insert (of new addresses, and of the listed one):
//    where the first 429 comes (at the address's hourly ceiling, give or take a tenth: sooner
//    where strangers' counts, the earlier probes' among them, share every one of its cells), and
//    how much the tables grow per 1,000 probes (rows rolled back count until vacuumed). Then,
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
import { POSTGRES_MAJORS, type PostgresMajor } from "../tools/local-supabase/database/cluster.ts";
import type { Database } from "../tools/local-supabase/database/database.ts";
import { OWNER } from "../tools/local-supabase/database/supabase-project.ts";
import { createPostgrest, type Postgrest } from "../tools/local-supabase/postgrest.ts";
import { median, ms, startBenchCluster, table, verdict, writeResults } from "./support.ts";

const FLOOD_AT_ONCE = 3_000;
const ONE_AT_A_TIME = 300;
const REFUSALS_FOR_GROWTH = 1_000;
const FLOOD_PER_SECOND = 400;
const FLOOD_CONNECTIONS = 50;
const VISITORS_PER_SECOND = 20;
const SECONDS = 10;
const PROBES_OF_EACH_KIND = 3_000;
const HELD_ADDRESSES = 100;
const FLOODING_ADDRESSES = 48;
/** How much lower every ceiling is for the strangers' scene. */
const SCENE_SCALE = 50;
const STRANGERS = 1_000;

const random = (below: number) => Math.floor(Math.random() * below);
const randomAddress = () => `${1 + random(223)}.${random(256)}.${random(256)}.${1 + random(254)}`;
let emails = 0;

const newEmail = () => `flood-${emails++}-${random(1e9)}@example.com`;

/** A sign-up as supabase-js sends it, from `address`; or another body, query and Prefer. */
function signUpRequest(
  address: string,
  { body = { email: newEmail() } as unknown, query = "select=*", prefer = "return=representation" } = {},
) {
  return {
    method: "POST",
    path: "/early_access",
    query: new URLSearchParams(query),
    headers: {
      apikey: "sb_publishable_bench",
      authorization: "Bearer sb_publishable_bench",
      "content-type": "application/json",
      "content-profile": "public",
      prefer,
      accept: "*/*",
      "cf-connecting-ip": address,
      "x-forwarded-for": address,
    },
    body: new TextEncoder().encode(JSON.stringify(body)),
    role: "anon",
  };
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

interface Answer {
  status: number;
  ms: number;
  retryAfter?: string;
}

async function send(
  handle: Postgrest["handle"],
  address: string,
  request = signUpRequest(address),
): Promise<Answer> {
  const sent = performance.now();
  const { status, headers } = await handle(request);
  const retryAfter = Object.entries(headers).find(([name]) => name.toLowerCase() === "retry-after")?.[1];
  return { status, ms: performance.now() - sent, retryAfter };
}

const percentile = (values: number[], p: number) => {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
};
const sleep = (ms: number) => new Promise((resume) => setTimeout(resume, Math.max(0, ms)));

/** `perSecond` requests a second for `seconds`, over at most `connections` at once. */
async function paced(
  handle: Postgrest["handle"],
  address: () => string,
  { perSecond, seconds, connections }: { perSecond: number; seconds: number; connections: number },
): Promise<Answer[]> {
  const total = perSecond * seconds;
  const answers: Answer[] = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < total) {
        const index = next++;
        await sleep(started + (index * 1000) / perSecond - performance.now());
        answers.push(await send(handle, address()));
      }
    }),
  );
  return answers;
}

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

/** The figures on a fresh server of `major`. */
async function flood(major: PostgresMajor) {
  const cluster = await startBenchCluster(["flood"], major);
  try {
    const owner = cluster.pool(OWNER, "flood", 1);
    const handlerOver = async (poolSize: number) =>
      (await createPostgrest(cluster.pool("authenticator", "flood", poolSize))).handle;
    const floodHandle = await handlerOver(FLOOD_CONNECTIONS);
    const visitorHandle = await handlerOver(10);

    // 1. A flood from one address, 100 at a time: its ceiling stored, the rest refused.
    const flooder = "198.18.0.1";
    const { rows: ceilings } = await owner.query<{ max: number; seconds: number }>(
      `select max_sign_ups as max, extract(epoch from window_length)::float8 as seconds
         from private.sign_up_limits where kind = 'ceiling' and name = 'per address per hour'`,
    );
    const ceiling = ceilings[0]!;
    const flooded: Answer[] = [];
    for (let sent = 0; sent < FLOOD_AT_ONCE; sent += 100) {
      flooded.push(...(await Promise.all(Array.from({ length: 100 }, () => send(floodHandle, flooder)))));
    }
    const firstRefusal = flooded.findIndex(({ status }) => status === 429);
    const stored = flooded.slice(0, firstRefusal).filter(({ status }) => status === 201).length;
    const storedInAll = flooded.filter(({ status }) => status === 201).length;
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

    // 2. Growth per 1,000 refusals, 50 at a time.
    const before = await privateBytes(owner);
    let refused = 0;
    for (let sent = 0; sent < REFUSALS_FOR_GROWTH; sent += 50) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => send(floodHandle, flooder)));
      refused += answers.filter(({ status }) => status === 429).length;
    }
    const grown = (((await privateBytes(owner)) - before) * 1000) / refused;

    // 3. Visitors alone, then during a flood from one /24 that starts afresh. Each pool's
    //    connections are opened first, as a running API's are: a pool closes those idle for 10 s,
    //    and 50 backends starting at once stalled every request for seconds.
    const visitors = { perSecond: VISITORS_PER_SECOND, seconds: SECONDS, connections: 10 };
    const warm = (handle: Postgrest["handle"], connections: number, address: () => string) =>
      Promise.all(Array.from({ length: connections }, () => send(handle, address())));
    await warm(visitorHandle, visitors.connections, randomAddress);
    const alone = await paced(visitorHandle, randomAddress, visitors);
    await warm(visitorHandle, visitors.connections, randomAddress);
    await warm(floodHandle, FLOOD_CONNECTIONS, () => flooder);
    await owner.exec(FORGET_COUNTS);
    const [during, flood] = await Promise.all([
      paced(visitorHandle, randomAddress, visitors),
      paced(floodHandle, () => `198.19.7.${1 + random(254)}`, {
        perSecond: FLOOD_PER_SECOND,
        seconds: SECONDS,
        connections: FLOOD_CONNECTIONS,
      }),
    ]);
    alone.push(...(await paced(visitorHandle, randomAddress, visitors)));

    // 4. Probes, each kind from an address of its own, about an address on the list.
    const listed = newEmail();
    await owner.query("insert into public.early_access (email) values ($1)", [listed]);
    const probes: string[][] = [];
    for (const [index, [kind, counted, probe]] of PROBES.entries()) {
      const from = `198.18.${10 + index}.1`;
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
      call private.make_failure_cells();`);
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

    const p99 = (answers: Answer[]) =>
      percentile(
        answers.map(({ ms }) => ms),
        0.99,
      );
    const refusalCost = median(refusals) / median(newSources);
    const uncountedCost = median(uncounted.map(({ ms }) => ms)) / median(refusals);
    const uncountedOther = count(uncounted, (status) => status !== 401 && status !== 403);
    const slowdown = p99(during) / p99(alone);
    const floodSlowest = Math.max(...flood.map(({ ms }) => ms));
    const floodOther = count(flood, (status) => status !== 201 && status !== 429);
    console.log(
      `\nPostgreSQL ${major}: one address stored ${stored} before its first refusal; ${ONE_AT_A_TIME} of each, one at a time ` +
        `(${dripped} of its sign-ups fitted as its bucket drained); ` +
        `visitors ${VISITORS_PER_SECOND}/s for ${SECONDS} s:\n\n` +
        table(
          ["", "figure", "target"],
          [
            [
              `a flood of ${FLOOD_AT_ONCE.toLocaleString("en")} at once from one address: stored`,
              String(storedInAll),
              `${storedInAll >= ceiling.max && storedInAll <= 2 * ceiling.max ? "PASS" : "MISS"} (${ceiling.max.toLocaleString("en")} to ${(2 * ceiling.max).toLocaleString("en")})`,
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
            ["visitors' p99, alone (before and after the flood)", ms(p99(alone)), ""],
            [
              `visitors' p99, during a flood of ${FLOOD_PER_SECOND}/s from one /24`,
              ms(p99(during)),
              `${slowdown.toFixed(1)}× ${slowdown <= 5 ? "PASS" : "MISS"} (≤ 5×)`,
            ],
            [
              "the flood's answers",
              `${count(flood, (status) => status === 201)} × 201, ${count(flood, (status) => status === 429)} × 429, ${floodOther} other`,
              `${floodOther === 0 ? "PASS" : "MISS"} (only 201 and 429)`,
            ],
            [
              "the flood's slowest answer",
              ms(floodSlowest),
              `${floodSlowest <= 1000 ? "PASS" : "MISS"} (≤ 1 s)`,
            ],
            ["visitors not stored", String(count([...alone, ...during], (status) => status !== 201)), ""],
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
      floodOtherAnswers: floodOthers,
      retryAfterSeconds: [Math.min(...retryAfters), Math.max(...retryAfters)],
      refusalMs: median(refusals),
      newSourceMs: median(newSources),
      refusalOverSignUp: refusalCost,
      uncountedFailureOverRefusal: uncountedCost,
      growthPer1000RefusalsBytes: grown,
      visitorsP99AloneMs: p99(alone),
      visitorsP99DuringFloodMs: p99(during),
      visitorsSlowdown: slowdown,
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
