// A PostgreSQL server, reached over a pool of connections as PostgREST reaches it (hasql-pool):
// each request takes a connection, runs its own transaction there, and gives the connection back.
// The connections take turns, the one given back longest ago first, and one unused for 30 s is
// closed (PostgREST's db-pool-max-idletime). So under steady traffic every connection the pool
// opened stays open, its plans made, as PostgREST's do; pg's own pool hands out the one given back
// last, so that all but the busiest few closed while traffic went on, and a burst opened new ones,
// each planning every statement of the rules again.
import { createHash } from "node:crypto";
import pg from "pg";
import { runTransaction, type Database, type Queryable, type QueryOptions } from "./database.ts";

export interface PoolOptions {
  /** postgres://user:password@host:port/database. */
  url: string;
  /** Connections at most; PostgREST's default pool is 10. */
  poolSize?: number;
  /** How long a connection may stay unused before it is closed; PostgREST's default is 30 s. */
  maxIdleMs?: number;
}

/** A connection given back, waiting its turn, closed once unused for maxIdleMs. */
interface Idle {
  client: pg.Client;
  timer: NodeJS.Timeout;
}

export function connectPool({ url, poolSize = 10, maxIdleMs = 30_000 }: PoolOptions): Database {
  /** The connections given back, the longest ago first. */
  const idle: Idle[] = [];
  /** Those waiting for a connection, the first come first. */
  const waiting: Array<{ take: (client: pg.Client) => void; fail: (error: Error) => void }> = [];
  /** Connections open, opening or closing: never more than poolSize. */
  let open = 0;
  let closing: Promise<void> | undefined;
  let closed = () => {};

  /** A place freed (a connection closed, or one that failed to open): it goes to whoever waits. */
  function freed() {
    open--;
    if (closing) {
      if (open === 0) closed();
      return;
    }
    const next = waiting.shift();
    if (next) connect().then(next.take, next.fail);
  }

  function closeConnection(client: pg.Client) {
    void client
      .end()
      .catch(() => {})
      .finally(freed);
  }

  /** Takes a connection out of the line, if it is there; whether it was. */
  function outOfLine(client: pg.Client): boolean {
    const index = idle.findIndex((entry) => entry.client === client);
    if (index === -1) return false;
    clearTimeout(idle[index]!.timer);
    idle.splice(index, 1);
    return true;
  }

  async function connect(): Promise<pg.Client> {
    open++;
    const client = new pg.Client({ connectionString: url });
    // A connection the server drops while it waits its turn leaves the pool (and must not bring
    // the process down); one dropped in use fails its query, and is closed when given back.
    client.on("error", () => {
      if (outOfLine(client)) closeConnection(client);
    });
    try {
      await client.connect();
      return client;
    } catch (error) {
      freed();
      throw error;
    }
  }

  async function take(): Promise<pg.Client> {
    if (closing) throw new Error("The pool is closed");
    const entry = idle.shift();
    if (entry) {
      clearTimeout(entry.timer);
      return entry.client;
    }
    if (open < poolSize) return connect();
    return new Promise((take, fail) => waiting.push({ take, fail }));
  }

  /** Gives a connection back: to whoever waits, else to the end of the line; a broken one is closed. */
  function giveBack(client: pg.Client, broken: boolean) {
    if (broken || closing) return closeConnection(client);
    const next = waiting.shift();
    if (next) return next.take(client);
    const timer = setTimeout(() => {
      if (outOfLine(client)) closeConnection(client);
    }, maxIdleMs);
    idle.push({ client, timer });
  }

  const on = (client: pg.Client): Queryable => ({
    query: async <T>(text: string, params?: unknown[], { prepared = false }: QueryOptions = {}) => {
      // A prepared statement is named after its text: the same text shares one per connection.
      const name = prepared ? createHash("sha256").update(text).digest("base64url") : undefined;
      const { rows } = await client.query({ name, text, values: params });
      return { rows: rows as T[] };
    },
    exec: async (sql) => void (await client.query(sql)),
  });

  /** `work` on a connection of its own; an error that is not the server's answer breaks it. */
  async function withConnection<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = await take();
    let broken = false;
    try {
      return await work(client);
    } catch (error) {
      broken = !(error instanceof pg.DatabaseError);
      throw error;
    } finally {
      giveBack(client, broken);
    }
  }

  return {
    query: (text, params, options) => withConnection((client) => on(client).query(text, params, options)),
    exec: (sql) => withConnection((client) => on(client).exec(sql)),
    transaction: async (work, options) => {
      const client = await take();
      let broken = false;
      try {
        return await runTransaction(on(client), work, options, () => (broken = true));
      } finally {
        // A connection that could not even roll back is closed rather than reused.
        giveBack(client, broken);
      }
    },
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        closed = resolve;
        for (const { fail } of waiting.splice(0)) fail(new Error("The pool is closed"));
        for (const { client, timer } of idle.splice(0)) {
          clearTimeout(timer);
          closeConnection(client);
        }
        if (open === 0) resolve();
      })),
  };
}
