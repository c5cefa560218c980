// The ceilings, under many connections at once: no client is admitted past its ceilings by more
// than a tenth plus its bucket's drip, whatever others do at the same time, for its sign-ups (its
// own rows, exact) and for its failures (a count-min sketch of sequences, 25_sign_up_rules.sql):
// a flood right after ordinary traffic, 48 flooders at once, whose failures' cells collide. And
// the failures' sketches can be resized on a live project on a server of 20 connections, where
// the shared lock table is smallest. What the rules cost strangers and crowds: crowds.test.ts.
//
// Requests run as PostgREST runs them (a transaction each, as anon, with the edge's headers),
// many at once over a pool of 20 connections, against the schema's limits unless said.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  startThrowawayCluster,
  SUPERUSER,
  type PostgresCluster,
} from "../../tools/local-supabase/database/cluster.ts";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { connectPool } from "../../tools/local-supabase/database/pool.ts";
import { OWNER, setUpSupabaseProject } from "../../tools/local-supabase/database/supabase-project.ts";
import {
  oneClientPerNetwork,
  openTestDatabase,
  requestOverSql,
  uniqueEmail,
  type TestDatabase,
} from "../support/database.ts";
import { FLOOD_LIMITS, FOLLOW, limitIn, limitsOf, mostThrough } from "./small-limits.ts";

const CONNECTIONS = 20;

/** Runs `tasks`, `atOnce` at a time, as a pool of API connections would: their answers, in order. */
async function inParallel<T>(tasks: Array<() => Promise<T>>, atOnce = CONNECTIONS): Promise<T[]> {
  const answers: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: atOnce }, async () => {
      while (next < tasks.length) {
        const index = next++;
        answers[index] = await tasks[index]!();
      }
    }),
  );
  return answers;
}

/** A sign-up of `email` (a new address by default) from `client`: `stored`, or the SQLSTATE. */
const signUp = (db: Database, client: string, email = uniqueEmail("ceilings")) =>
  requestOverSql(db, { "cf-connecting-ip": client }, [{ email }]);

describe("no client past its ceilings, whatever others do", () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await openTestDatabase({ seed: null, poolSize: CONNECTIONS });
  });
  afterAll(() => test?.database.close());

  it("a /24's flood right after 300 visitors from 300 networks: at most its hourly ceiling and a tenth, plus its drip", async () => {
    const ceiling = limitIn(await limitsOf(test.owner), "ceiling", "per network per hour");
    const ordinary = await inParallel(
      oneClientPerNetwork(300).map((client) => () => signUp(test.database, client)),
    );
    expect(ordinary).toEqual(Array(300).fill("stored"));

    const started = performance.now();
    const flood = await inParallel(
      Array.from(
        { length: 2_300 },
        (_, index) => () => signUp(test.database, `203.0.113.${1 + (index % 250)}`),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const stored = flood.filter((answer) => answer === "stored").length;
    console.log(
      `a /24's 2,300 after 300 visitors: ${stored} stored in ${seconds.toFixed(1)} s (ceiling ${ceiling.max})`,
    );

    expect(flood.filter((answer) => answer !== "stored" && answer !== "PGRST")).toEqual([]);
    expect(stored).toBeLessThanOrEqual(mostThrough(seconds, ceiling));
    // Judged by its own counts alone, whatever the visitors did: refused before its ceiling only
    // where one of its shards (each a sixteenth of the ceiling) filled before the others.
    expect(stored).toBeGreaterThanOrEqual(0.95 * ceiling.max);
  }, 180_000);
});

describe("a fresh address's failures right after ordinary traffic", () => {
  // The ceilings at a fifth of the schema's: an address's 200 an hour. A failure that reaches an
  // idle cell at the same moment as the one lifting it is lost (at most the connections at once,
  // once per idle spell, 25_sign_up_rules.sql): within a tenth of 200, where 20 would not be.
  let test: TestDatabase;
  beforeAll(async () => {
    test = await openTestDatabase({
      seed: `update private.sign_up_limits set max_sign_ups = max_sign_ups / 5 where kind = 'ceiling'; ${FOLLOW}`,
      poolSize: CONNECTIONS,
    });
  });
  afterAll(() => test?.database.close());

  it("a fresh address's duplicates, three times its ceiling, right after 300 visitors from 300 networks: refused past its ceiling", async () => {
    const ceiling = limitIn(await limitsOf(test.owner), "ceiling", "per address per hour");
    const ordinary = await inParallel(
      oneClientPerNetwork(300, 8).map((client) => () => signUp(test.database, client)),
    );
    expect(ordinary).toEqual(Array(300).fill("stored"));
    const listed = uniqueEmail("listed");
    await test.owner.query("insert into public.early_access (email) values ($1)", [listed]);

    const started = performance.now();
    const probes = await inParallel(
      Array.from({ length: 3 * ceiling.max }, () => () => signUp(test.database, "198.51.100.200", listed)),
    );
    const seconds = (performance.now() - started) / 1000;
    const answered = probes.filter((answer) => answer === "23505").length;
    console.log(
      `${3 * ceiling.max} duplicates after 300 visitors: ${answered} answered in ${seconds.toFixed(1)} s (ceiling ${ceiling.max})`,
    );

    expect(answered + probes.filter((answer) => answer === "PGRST").length).toBe(3 * ceiling.max);
    expect(answered).toBeLessThanOrEqual(mostThrough(seconds, ceiling));
    // The visitors' sign-ups count in their own rows, never in the failures' cells.
    expect(answered).toBeGreaterThanOrEqual(ceiling.max);
  }, 180_000);
});

describe("48 flooders from 48 networks at once", () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await openTestDatabase({ seed: FLOOD_LIMITS, poolSize: CONNECTIONS });
  });
  afterAll(() => test?.database.close());

  /** Each of `flooders` sends `count` requests made by `request`, one after another, all 48 at once. */
  const flood = (flooders: string[], count: number, request: (client: string) => Promise<string>) =>
    Promise.all(
      flooders.map(async (client) => {
        const own: string[] = [];
        for (let sent = 0; sent < count; sent++) own.push(await request(client));
        return own;
      }),
    );

  it("each stores its hourly ceiling of sign-ups, and no more than a tenth over it, plus its drip", async () => {
    const ceiling = limitIn(await limitsOf(test.owner), "ceiling", "per address per hour");
    const flooders = oneClientPerNetwork(48, 16);
    const started = performance.now();
    const answers = await flood(flooders, 2 * ceiling.max, (client) => signUp(test.database, client));
    const seconds = (performance.now() - started) / 1000;
    const stored = answers.map((own) => own.filter((answer) => answer === "stored").length);
    console.log(
      `48 flooders, ${2 * ceiling.max} sign-ups each: stored ${Math.min(...stored)} to ${Math.max(...stored)} (ceiling ${ceiling.max}) in ${seconds.toFixed(1)} s`,
    );

    expect(answers.flat().filter((answer) => answer !== "stored" && answer !== "PGRST")).toEqual([]);
    const most = mostThrough(seconds, ceiling);
    expect(
      stored.filter((count) => count > most),
      `stored per flooder, at most ${most}`,
    ).toEqual([]);
    // Each is judged by its own rows, exactly: none is refused before its ceiling.
    expect(stored.filter((count) => count < ceiling.max)).toEqual([]);
  }, 180_000);

  it("each has at most its hourly ceiling and a tenth of failures answered, plus its drip, however their cells meet", async () => {
    const ceiling = limitIn(await limitsOf(test.owner), "ceiling", "per address per hour");
    const flooders = oneClientPerNetwork(48, 20);
    const listed = uniqueEmail("listed");
    await test.owner.query("insert into public.early_access (email) values ($1)", [listed]);
    // Every failure the rules decide, in turn: a duplicate, an invalid address, a missing one, a
    // body of two rows, an upsert of a listed address.
    const failures: Array<(client: string) => Promise<string>> = [
      (client) => signUp(test.database, client, listed),
      (client) => signUp(test.database, client, "not an address"),
      (client) => requestOverSql(test.database, { "cf-connecting-ip": client }, [{ email: null }]),
      (client) =>
        requestOverSql(test.database, { "cf-connecting-ip": client }, [
          { email: uniqueEmail() },
          { email: uniqueEmail() },
        ]),
      (client) =>
        requestOverSql(
          test.database,
          { "cf-connecting-ip": client, prefer: "resolution=ignore-duplicates" },
          [{ email: listed }],
          "email",
        ),
    ];
    let sent = 0;
    const started = performance.now();
    const answers = await flood(flooders, 2 * ceiling.max, (client) =>
      failures[sent++ % failures.length]!(client),
    );
    const seconds = (performance.now() - started) / 1000;
    const answered = answers.map((own) => own.filter((answer) => answer !== "PGRST").length);
    console.log(
      `48 flooders, ${2 * ceiling.max} failures each: ${Math.min(...answered)} to ${Math.max(...answered)} answered (ceiling ${ceiling.max}) in ${seconds.toFixed(1)} s`,
    );

    expect(new Set(answers.flat())).toEqual(new Set(["23505", "23514", "23502", "P0001", "stored", "PGRST"]));
    const most = mostThrough(seconds, ceiling);
    expect(
      answered.filter((count) => count > most),
      `answered per flooder, at most ${most}`,
    ).toEqual([]);
    // A flooder whose cells no other shares, its address's and its network's, meets its own
    // ceiling, no sooner: a sketch never undercounts, and overcounts only where cells meet.
    const { rows } = await test.owner.query<{ client: string; cells: string }>(
      `select client, string_agg(n.scope || (private.sketch_columns(sha256(n.named), s.sketch_rows, s.sketch_width))[1], ' ') as cells
         from unnest($1::text[]) client, private.clients_of(client) n join private.sign_up_scopes s on s.name = n.scope
        group by client`,
      [flooders],
    );
    const cellsOf = new Map(rows.map(({ client, cells }) => [client, cells.split(" ")]));
    const alone = flooders.filter((client) =>
      cellsOf
        .get(client)!
        .every((cell) => flooders.every((other) => other === client || !cellsOf.get(other)!.includes(cell))),
    );
    expect(alone.length).toBeGreaterThan(0);
    for (const client of alone)
      expect(answered[flooders.indexOf(client)], client).toBeGreaterThanOrEqual(ceiling.max);
  }, 180_000);
});

describe("resizing the sketches on a live project of 20 connections", () => {
  let server: PostgresCluster;
  let owner: Database;
  beforeAll(async () => {
    server = await startThrowawayCluster({ max_connections: "20" }, inject("postgresMajor"));
    const admin = connectPool({ url: server.url(SUPERUSER, "postgres"), poolSize: 1 });
    await admin.exec("create database project").finally(() => admin.close());
    // Every migration, the ones that made and resized the sketches included, as `db push` applies them.
    await setUpSupabaseProject(server, "project");
    owner = connectPool({ url: server.url(OWNER, "project"), poolSize: 2 });
  }, 120_000);
  afterAll(async () => {
    await owner?.close();
    await server?.stop();
  });

  const cells = async () =>
    (
      await owner.query<{ n: number }>(
        "select count(*)::integer as n from pg_catalog.pg_class where relnamespace = 'private'::regnamespace and relkind = 'S'",
      )
    ).rows[0]!.n;

  it("the largest change allowed, 3,000 cells, passes; a larger one is refused, saying what to do", async () => {
    const before = await cells();
    const { rows } = await owner.query<{ width: number }>(
      "select sketch_width as width from private.sign_up_scopes where name = 'network'",
    );
    const width = rows[0]!.width;
    /** A network's failures' sketch of one row made `to` cells wide, as a migration makes it. */
    const resize = (to: number) =>
      owner.exec(`update private.sign_up_scopes set sketch_width = ${to} where name = 'network'; ${FOLLOW}`);
    // Of each of its two ceilings, the kept cells emptied and the rest made: 1,500 a ceiling.
    await resize(1_500);
    expect(await cells()).toBe(before + 2 * (1_500 - width));
    expect(await signUp(owner, "192.0.2.10")).toBe("stored");

    // Back down is 3,000 too (the kept emptied, the rest dropped); 1,501 would be 3,002.
    await resize(width);
    expect(await cells()).toBe(before);
    await expect(resize(1_501)).rejects.toThrow(/3002 cells in one transaction, more than 3000/);
    expect(await cells()).toBe(before);
  }, 120_000);

  it.each([
    [
      "a ceiling",
      "update private.sign_up_limits set max_sign_ups = 5 where kind = 'ceiling' and name = 'per address per hour'",
    ],
    [
      "a pace",
      "update private.sign_up_limits set max_sign_ups = 5 where kind = 'pace' and name = 'per address per minute'",
    ],
    ["a scope's shards", "update private.sign_up_scopes set shards = 4 where name = 'network'"],
  ])(
    "a change of %s that leaves what the rules read as it was is refused at its commit, naming the call",
    async (_, change) => {
      const limits =
        "select (select json_agg(l order by l.kind, l.name) from private.sign_up_limits l)::text || (select json_agg(s order by s.name) from private.sign_up_scopes s)::text as held";
      const before = (await owner.query<{ held: string }>(limits)).rows[0]!.held;
      await expect(owner.exec(change)).rejects.toThrow(/call private\.apply_sign_up_limits\(\)/);
      expect((await owner.query<{ held: string }>(limits)).rows[0]!.held).toBe(before);
      // With the call, the same change holds, and what the rules read follows it.
      await owner.exec(`${change}; call private.apply_sign_up_limits();`);
      const { rows } = await owner.query<{ stale: boolean }>(
        `select exists (select * from private.wanted_sign_up_buckets() except select * from private.sign_up_buckets) as stale`,
      );
      expect(rows[0]!.stale).toBe(false);
    },
  );
});
