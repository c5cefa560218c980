// A PostgreSQL server, reached over a pool of connections as PostgREST reaches it: each
// request takes a connection, runs its own transaction there, and gives the connection back.
import { createHash } from "node:crypto";
import pg from "pg";
import { runTransaction, type Database, type Queryable, type QueryOptions } from "./database.ts";

export interface PoolOptions {
  /** postgres://user:password@host:port/database. */
  url: string;
  /** Connections at most; PostgREST's default pool is 10. */
  poolSize?: number;
}

export function connectPool({ url, poolSize = 10 }: PoolOptions): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle connection the server drops must not bring the process down; the pool replaces it.
  pool.on("error", () => {});

  // A pool and a checked-out client answer queries alike; outside a transaction any
  // connection will do.
  const on = (connection: pg.Pool | pg.PoolClient): Queryable => ({
    query: async <T>(text: string, params?: unknown[], { prepared = false }: QueryOptions = {}) => {
      // A prepared statement is named after its text: the same text shares one per connection.
      const name = prepared ? createHash("sha256").update(text).digest("base64url") : undefined;
      const { rows } = await connection.query({ name, text, values: params });
      return { rows: rows as T[] };
    },
    exec: async (sql) => void (await connection.query(sql)),
  });

  return {
    ...on(pool),
    transaction: async (work, options) => {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        return await runTransaction(on(client), work, options, (error) => (broken = error as Error));
      } finally {
        // A connection that could not even roll back is closed rather than reused.
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}
