// The ceilings, as a count-min sketch of leaky buckets (25_sign_up_rules.sql, "Attempts"), where
// others' traffic could hide a flood. No client is admitted past its ceilings by more than a tenth
// plus its bucket's drip, whatever others do at the same time: a flood right after ordinary
// traffic, many flooders at once (two clients sharing a cell: attempts.test.ts). And the sketch's
// cells can be resized on a live project on a server of 20 connections, where the shared lock
// table is smallest. What the sketch costs strangers and crowds: crowds.test.ts.
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
import { FLOOD_LIMITS, limitIn, limitsOf } from "./small-limits.ts";

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

/** The attempts a ceiling's bucket lets through as it drains over `seconds`: one per drip, and one more. */
const dripOver = (seconds: number, { max, seconds: window }: { max: number; seconds: number }) =>
  Math.ceil((seconds * max) / window) + 1;

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
    expect(stored).toBeLessThanOrEqual(Math.floor(1.1 * ceiling.max) + dripOver(seconds, ceiling));
    // The visitors' counts only raise the /24's: it is refused at most 300 before its own ceiling.
    expect(stored).toBeGreaterThanOrEqual(ceiling.max - 300);
  }, 180_000);

  it("a fresh address's 3,000 duplicates right after 1,000 visitors from 1,000 networks: refused past its ceiling", async () => {
    const ceiling = limitIn(await limitsOf(test.owner), "ceiling", "per address per hour");
    const ordinary = await inParallel(
      oneClientPerNetwork(1_000, 8).map((client) => () => signUp(test.database, client)),
    );
    expect(ordinary).toEqual(Array(1_000).fill("stored"));
    const listed = uniqueEmail("listed");
    await test.owner.query("insert into public.early_access (email) values ($1)", [listed]);

    const started = performance.now();
    const probes = await inParallel(
      Array.from({ length: 3_000 }, () => () => signUp(test.database, "198.51.100.200", listed)),
    );
    const seconds = (performance.now() - started) / 1000;
    const answered = probes.filter((answer) => answer === "23505").length;
    console.log(
      `3,000 duplicates after 1,000 visitors: ${answered} answered in ${seconds.toFixed(1)} s (ceiling ${ceiling.max})`,
    );

    expect(answered + probes.filter((answer) => answer === "PGRST").length).toBe(3_000);
    expect(answered).toBeLessThanOrEqual(Math.floor(1.1 * ceiling.max) + dripOver(seconds, ceiling));
    expect(answered).toBeGreaterThanOrEqual(ceiling.max - 1_000);
  }, 180_000);
});

describe("48 flooders from 48 networks at once", () => {
  let test: TestDatabase;
  beforeAll(async () => {
    test = await openTestDatabase({ seed: FLOOD_LIMITS, poolSize: CONNECTIONS });
  });
  afterAll(() => test?.database.close());

  it("each stores at most its hourly ceiling and a tenth, plus its drip, however their cells meet", async () => {
    const ceiling = limitIn(await limitsOf(test.owner), "ceiling", "per address per hour");
    const flooders = oneClientPerNetwork(48, 16);
    const started = performance.now();
    // Each sends twice its ceiling, one after another, all 48 at once over the pool.
    const answers = await Promise.all(
      flooders.map(async (client) => {
        const own: string[] = [];
        for (let sent = 0; sent < 2 * ceiling.max; sent++) own.push(await signUp(test.database, client));
        return own;
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const stored = answers.map((own) => own.filter((answer) => answer === "stored").length);
    console.log(
      `48 flooders, ${2 * ceiling.max} each: stored ${Math.min(...stored)} to ${Math.max(...stored)} (ceiling ${ceiling.max}) in ${seconds.toFixed(1)} s`,
    );

    expect(answers.flat().filter((answer) => answer !== "stored" && answer !== "PGRST")).toEqual([]);
    const most = Math.floor(1.1 * ceiling.max) + dripOver(seconds, ceiling);
    expect(
      stored.filter((count) => count > most),
      `stored per flooder, at most ${most}`,
    ).toEqual([]);
    // A sketch never undercounts; it may overcount a flooder whose every cell it shares.
    expect(stored.reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(0.9 * 48 * ceiling.max);
  }, 180_000);
});

describe("resizing the sketches on a live project of 20 connections", () => {
  let server: PostgresCluster;
  let owner: Database;
  beforeAll(async () => {
    server = await startThrowawayCluster({ max_connections: "20" }, inject("postgresMajor"));
    const admin = connectPool({ url: server.url(SUPERUSER, "postgres"), poolSize: 1 });
    await admin.exec("create database project").finally(() => admin.close());
    // Every migration, the one from the slots to the sketches included, as `db push` applies them.
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
    // A network's sketch from 3 × 64 to 3 × 500, in each of its two ceilings: 192 cells kept
    // and emptied, 1,308 made, twice.
    await owner.transaction((tx) =>
      tx.exec("update private.sign_up_scopes set ceiling_width = 500 where name = 'network'"),
    );
    expect(await cells()).toBe(before + 2 * (1_500 - 192));
    expect(await signUp(owner, "192.0.2.10")).toBe("stored");

    // Back down is 3,000 too (384 kept, 2,616 dropped); 3 × 501 from 3 × 64 would be 3,006.
    await owner.exec("update private.sign_up_scopes set ceiling_width = 64 where name = 'network'");
    expect(await cells()).toBe(before);
    await expect(
      owner.exec("update private.sign_up_scopes set ceiling_width = 501 where name = 'network'"),
    ).rejects.toThrow(/3006 cells in one transaction, more than 3000/);
    expect(await cells()).toBe(before);
  }, 120_000);
});
