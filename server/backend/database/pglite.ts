// The embedded engine: PGlite (PostgreSQL compiled to WebAssembly) in this process, on a data
// directory or in memory, set up as a Supabase project is: its roles, then the migrations.
// PGlite has a single connection, so every use of it takes its turn through one queue: a
// transaction never sees another request's statements.
import { PGlite } from "@electric-sql/pglite";
import { mkdirSync, readFileSync } from "node:fs";
import { beginStatement, type Database, type Queryable } from "./database.ts";
import { applyMigrations } from "./migrations.ts";
import { createQueue } from "./queue.ts";

export const SUPABASE_ROLES_SQL = readFileSync(new URL("./supabase-roles.sql", import.meta.url), "utf8");

export interface PGliteOptions {
  /** Where the data lives; null keeps it in memory. */
  dataDir: string | null;
  /** Receives a line per migration applied. */
  log?: (line: string) => void;
  /** SQL run once, right after the migrations have created the database (Supabase's seed.sql). */
  seed?: string;
}

/** Opens the database, creates the roles it lacks and applies pending migrations. */
export async function openPGlite({ dataDir, log = () => {}, seed }: PGliteOptions): Promise<Database> {
  // PGlite creates its data directory, but not the directory's parents.
  if (dataDir !== null) mkdirSync(dataDir, { recursive: true });
  const pglite = await PGlite.create(dataDir ?? undefined);
  const db = wrap(pglite);
  try {
    await db.exec(SUPABASE_ROLES_SQL);
    const { applied, created } = await applyMigrations(db);
    for (const file of applied) log(`Applied migration ${file}`);
    if (created && seed) await db.exec(seed);
    return db;
  } catch (error) {
    await db.close();
    throw error;
  }
}

function wrap(pglite: PGlite): Database {
  const enqueue = createQueue();
  const connection: Queryable = {
    query: (text, params) => pglite.query(text, params),
    exec: async (sql) => void (await pglite.exec(sql)),
  };
  return {
    query: (text, params) => enqueue(() => connection.query(text, params)),
    exec: (sql) => enqueue(() => connection.exec(sql)),
    transaction: (work, options) =>
      enqueue(async () => {
        await pglite.exec(beginStatement(options));
        try {
          const result = await work(connection);
          await pglite.exec("commit");
          return result;
        } catch (error) {
          await pglite.exec("rollback");
          throw error;
        }
      }),
    // Queued, so requests already waiting finish first.
    close: () => enqueue(() => pglite.close()),
  };
}
