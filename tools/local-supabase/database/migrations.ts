// Applies supabase/migrations/<version>_<name>.sql in version order, each exactly once, and
// records it where the Supabase CLI does: supabase_migrations.schema_migrations.
import { readdirSync, readFileSync } from "node:fs";
import type { Database, Queryable } from "./database.ts";

const MIGRATIONS_DIR = new URL("../../../supabase/migrations/", import.meta.url);

/** The CLI's file name pattern; other files in the folder are not migrations. */
const MIGRATION_FILE = /^(\d+)_(.+)\.sql$/;

/**
 * Whether a migration runs alone, outside a transaction: one that is one VACUUM, its comments
 * aside. VACUUM cannot run inside a transaction: the CLI sends a migration's statements as one
 * batch, and PostgreSQL commits a VACUUM that comes first in it on its own.
 */
export const runsAlone = (sql: string): boolean => /^(\s*--[^\n]*\n)*\s*vacuum\b[^;]*;\s*$/i.test(sql);

const HISTORY_TABLE_SQL = `
  create schema if not exists supabase_migrations;
  create table if not exists supabase_migrations.schema_migrations (
    version text primary key,
    name text not null,
    applied_at timestamptz not null default now()
  );
`;

export interface MigrationReport {
  /** File names of the migrations applied now, in order. */
  applied: string[];
  /** True when none had been applied before: the database is new. */
  created: boolean;
}

/**
 * Applies the migrations not yet recorded; with `before`, only those older than that version (a
 * test's project as it stood before a migration).
 */
export async function applyMigrations(db: Database, before?: string): Promise<MigrationReport> {
  await db.exec(HISTORY_TABLE_SQL);
  const { rows } = await db.query<{ version: string }>(
    "select version from supabase_migrations.schema_migrations",
  );
  const applied = new Set(rows.map((row) => row.version));
  const pending = readdirSync(MIGRATIONS_DIR)
    .sort()
    .flatMap((file) => {
      const match = MIGRATION_FILE.exec(file);
      return match && !applied.has(match[1]!) && !(before && match[1]! >= before)
        ? [{ file, version: match[1]!, name: match[2]! }]
        : [];
    });
  for (const { file, version, name } of pending) {
    const sql = readFileSync(new URL(file, MIGRATIONS_DIR), "utf8");
    const record = (on: Queryable) =>
      on.query("insert into supabase_migrations.schema_migrations (version, name) values ($1, $2)", [
        version,
        name,
      ]);
    if (runsAlone(sql)) {
      await db.exec(sql);
      await record(db);
      continue;
    }
    // A failing migration leaves neither its changes nor its record behind.
    await db.transaction(async (tx) => {
      await tx.exec(sql);
      await record(tx);
    });
  }
  return { applied: pending.map(({ file }) => file), created: applied.size === 0 && pending.length > 0 };
}
