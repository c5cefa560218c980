// The endpoint's pool of connections, on the real server, as PostgREST's own (hasql-pool) keeps
// them: the connections take turns, so that steady traffic keeps every one open with its plans
// made; one unused for a while is closed; one the server ends leaves the pool. Each pool here is
// told apart on the server by an application name of its own.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { connectPool, type PoolOptions } from "../../tools/local-supabase/database/pool.ts";
import { testServerUrl } from "../support/database.ts";

const opened: Database[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((pool) => pool.close()));
});

/** A pool on the run's server, and how to see its connections there. */
function poolOf(options: Omit<PoolOptions, "url">) {
  const name = `pool-test-${randomUUID()}`;
  const pool = connectPool({
    url: `${testServerUrl("postgres", "postgres")}?application_name=${name}`,
    ...options,
  });
  opened.push(pool);
  const observer = connectPool({ url: testServerUrl("postgres", "postgres"), poolSize: 1 });
  opened.push(observer);
  return {
    pool,
    /** The server processes of the pool's open connections. */
    connections: async () =>
      (
        await observer.query<{ pid: number }>(
          "select pid from pg_stat_activity where application_name = $1 order by pid",
          [name],
        )
      ).rows.map(({ pid }) => pid),
    observer,
  };
}

/** The server process a request's transaction ran on. */
const processOf = async (pool: Database) =>
  pool.transaction(
    async (tx) => (await tx.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid,
  );

/** Three requests at once, each held until all three have a connection: three connections opened. */
async function openThree(pool: Database): Promise<number[]> {
  let arrived = 0;
  const together = () =>
    new Promise<void>((all) => {
      arrived++;
      const check = () => (arrived === 3 ? all() : setImmediate(check));
      check();
    });
  return Promise.all(
    Array.from({ length: 3 }, () =>
      pool.transaction(async (tx) => {
        const { pid } = (await tx.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!;
        await together();
        return pid;
      }),
    ),
  );
}

describe("the endpoint's pool", () => {
  it("hands out its connections in turn, the one given back longest ago first", async () => {
    const { pool } = poolOf({ poolSize: 3 });
    const three = await openThree(pool);
    expect(new Set(three).size).toBe(3);

    const inTurn: number[] = [];
    for (let request = 0; request < 9; request++) inTurn.push(await processOf(pool));

    // Each in the order it was given back, again and again: none left to idle while others work.
    const order = inTurn.slice(0, 3);
    expect(new Set(order)).toEqual(new Set(three));
    expect(inTurn).toEqual([...order, ...order, ...order]);
  });

  it("keeps every connection open under steady traffic, and closes those unused for its idle time", async () => {
    const { pool, connections } = poolOf({ poolSize: 3, maxIdleMs: 2_000 });
    const three = await openThree(pool);

    // A request every 100 ms, one at a time: each connection is used every 300 ms or so, well
    // within its 2 s (a pool that handed out the last one given back would use one, and close two).
    for (let request = 0; request < 30; request++) {
      await processOf(pool);
      await sleep(100);
    }
    expect(await connections()).toEqual(three.toSorted((a, b) => a - b));

    // Then nothing: all three closed, however long this machine takes to get to it.
    while ((await connections()).length > 0) await sleep(200);
    // And the next request opens one again.
    expect(three).not.toContain(await processOf(pool));
  });

  it("lets go of a connection the server ends while it waits its turn, and serves from the others", async () => {
    const { pool, connections, observer } = poolOf({ poolSize: 3 });
    const three = await openThree(pool);
    const [ended, ...kept] = three;

    await observer.query("select pg_terminate_backend($1)", [ended]);
    while ((await connections()).includes(ended!)) await sleep(50);
    // The server's goodbye reached the pool before the answer above: one turn of the event loop
    // for the pool to have read it.
    await new Promise((turn) => setImmediate(turn));

    const served: number[] = [];
    for (let request = 0; request < 6; request++) served.push(await processOf(pool));
    expect(served).not.toContain(ended);
    expect(new Set(served)).toEqual(new Set(kept));
  });

  it("leaves no request waiting when its connections cannot be opened: each is told why", async () => {
    const pool = connectPool({ url: testServerUrl("no_such_role", "postgres"), poolSize: 1 });
    opened.push(pool);
    // One opening at a time, the others waiting their turn: each turn fails, and each request with it.
    const answers = await Promise.allSettled(Array.from({ length: 3 }, () => processOf(pool)));
    expect(answers.map((answer) => answer.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(String((answers[2] as PromiseRejectedResult).reason)).toContain(
      'role "no_such_role" does not exist',
    );
  });

  it("lets work in progress finish when it closes, then refuses more", async () => {
    const { pool, connections } = poolOf({ poolSize: 2 });
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const inProgress = pool.transaction(async (tx) => {
      await held;
      return (await tx.query<{ one: number }>("select 1 as one")).rows[0]!.one;
    });
    while ((await connections()).length === 0) await sleep(20);

    const closed = pool.close();
    await expect(processOf(pool)).rejects.toThrow("The pool is closed");
    release();
    expect(await inProgress).toBe(1);
    await closed;
  });
});
