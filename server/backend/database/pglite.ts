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

/**
 * Opens the database (null: in memory), creates the roles it lacks and applies pending
 * migrations, reporting each one to `log`.
 */
export async function openPGlite(dataDir: string | null, log: (line: string) => void): Promise<Database> {
  // PGlite creates its data directory, but not the directory's parents.
  if (dataDir !== null) mkdirSync(dataDir, { recursive: true });
  const pglite = await PGlite.create(dataDir ?? undefined);
  const db = wrap(pglite);
  try {
    await db.exec(SUPABASE_ROLES_SQL);
    for (const file of await applyMigrations(db)) log(`Applied migration ${file}`);
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
