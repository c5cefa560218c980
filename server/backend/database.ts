// The embedded Postgres: PGlite on a data directory or in memory, with Supabase's roles and
// this project's migrations in place.
import { PGlite } from "@electric-sql/pglite";
import { mkdirSync, readFileSync } from "node:fs";
import { applyMigrations } from "./migrations.ts";

const ROLES_SQL = readFileSync(new URL("./roles.sql", import.meta.url), "utf8");

/**
 * Opens the database (null: in memory), creates the roles it lacks and applies pending
 * migrations, reporting each one to `log`.
 */
export async function openDatabase(dataDir: string | null, log: (line: string) => void): Promise<PGlite> {
  // PGlite creates its data directory, but not the directory's parents.
  if (dataDir !== null) mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir ?? undefined);
  try {
    await db.exec(ROLES_SQL);
    for (const file of await applyMigrations(db)) log(`Applied migration ${file}`);
    return db;
  } catch (error) {
    await db.close();
    throw error;
  }
}
