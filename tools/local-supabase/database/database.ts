// The one interface the REST endpoint has to its database: a PostgreSQL server reached over a
// pool of connections (pool.ts), the local one (local-database.ts) or any other set up as a
// Supabase project (SUPABASE_DB_URL).

export interface QueryResult<T> {
  rows: T[];
}

export interface QueryOptions {
  /**
   * Prepared on its connection the first time that connection runs this text, then only bound
   * and run: as PostgREST runs its own statements (db-prepared-statements, on by default), so
   * that a request costs the server what it costs under PostgREST, not a parse and plan more.
   */
  prepared?: boolean;
}

export interface Queryable {
  /** One statement; values only as parameters ($1, $2, …). */
  query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<QueryResult<T>>;
  /** Several statements at once, without parameters (a migration file). */
  exec(sql: string): Promise<void>;
}

export interface TransactionOptions {
  /** A read-only transaction, as PostgREST runs GET and HEAD. */
  readOnly?: boolean;
}

export interface Database extends Queryable {
  /**
   * Runs `work` in one READ COMMITTED transaction on one connection, as PostgREST runs each
   * request: committed when `work` resolves, rolled back when it throws.
   */
  transaction<T>(work: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Lets work in progress finish, then closes the connections (and stops a server it started). */
  close(): Promise<void>;
}

/**
 * `work` on one connection between BEGIN and COMMIT, or ROLLBACK when it throws; the error is
 * rethrown. A ROLLBACK that fails too goes to `rollbackFailed` (by default, rethrown instead).
 */
export async function runTransaction<T>(
  connection: Queryable,
  work: (tx: Queryable) => Promise<T>,
  { readOnly = false }: TransactionOptions = {},
  rollbackFailed: (error: unknown) => void = (error) => {
    throw error;
  },
): Promise<T> {
  await connection.exec(`begin isolation level read committed ${readOnly ? "read only" : "read write"}`);
  try {
    const result = await work(connection);
    await connection.exec("commit");
    return result;
  } catch (error) {
    await connection.exec("rollback").catch(rollbackFailed);
    throw error;
  }
}
