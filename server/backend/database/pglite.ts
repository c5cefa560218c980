// The embedded engine: PGlite (PostgreSQL compiled to WebAssembly) in this process, on a data
// directory or in memory, set up as a Supabase project is: its roles, then the migrations.
// PGlite has a single connection, so every use of it takes its turn through one queue: a
// transaction never sees another request's statements.
import { PGlite } from "@electric-sql/pglite";
import { readFileSync } from "node:fs";
import { runTransaction, type Database, type Queryable } from "./database.ts";
import { applyMigrations } from "./migrations.ts";
import { dataFolder, lockDataDir } from "./data-dir-lock.ts";
import { DurableNodeFS, durableStartParams } from "./durable-nodefs.ts";
import { createQueue } from "./queue.ts";

export const SUPABASE_ROLES_SQL = readFileSync(new URL("./supabase-roles.sql", import.meta.url), "utf8");

/**
 * PostgreSQL's defaults are sized for a server (128 MB of shared buffers alone); a local
 * sign-up list needs a fraction. PGlite runs one backend in single-user mode, so the
 * connection slots and their lock tables shrink too. (The npm scripts also run Node with
 * --liftoff-only, so V8 keeps one compilation of PGlite's WebAssembly instead of two; see the
 * README's section on memory.)
 */
const SMALL_FOOTPRINT = [
  ["shared_buffers", "16MB"],
  ["wal_buffers", "1MB"],
  ["work_mem", "1MB"],
  ["maintenance_work_mem", "8MB"],
  ["max_connections", "4"],
].flatMap(([name, value]) => ["-c", `${name}=${value}`]);

export interface PGliteOptions {
  /** Where the data lives, in any of PGlite's spellings (a path, `file://…`); null or `memory://` keeps it in memory. */
  dataDir: string | null;
  /** Receives a line per migration applied. */
  log?: (line: string) => void;
  /** SQL run once, right after the migrations have created the database (Supabase's seed.sql). */
  seed?: string;
}

/**
 * Opens the database, creates the roles it lacks and applies pending migrations. A data folder
 * is locked first: another process using it is refused (DataDirLockedError) before any file
 * is touched.
 */
export async function openPGlite({ dataDir, log = () => {}, seed }: PGliteOptions): Promise<Database> {
  const folder = dataFolder(dataDir);
  const lock = folder === null ? null : lockDataDir(folder);
  let db: Database | undefined;
  try {
    // On a folder, every commit is on disk before it is acknowledged (durable-nodefs.ts); in
    // memory there is no disk to wait for.
    const pglite = await PGlite.create({
      ...(folder === null ? {} : { fs: new DurableNodeFS(folder) }),
      startParams: [
        ...(folder === null ? PGlite.defaultStartParams : durableStartParams(PGlite.defaultStartParams)),
        ...SMALL_FOOTPRINT,
      ],
    });
    db = wrap(pglite, () => lock?.release());
    await db.exec(SUPABASE_ROLES_SQL);
    const { applied, created } = await applyMigrations(db);
    for (const file of applied) log(`Applied migration ${file}`);
    if (created && seed) await db.exec(seed);
    return db;
  } catch (error) {
    if (db) await db.close();
    else lock?.release();
    throw error;
  }
}

function wrap(pglite: PGlite, afterClose: () => void): Database {
  const enqueue = createQueue();
  const connection: Queryable = {
    query: (text, params) => pglite.query(text, params),
    exec: async (sql) => void (await pglite.exec(sql)),
  };
  return {
    query: (text, params) => enqueue(() => connection.query(text, params)),
    exec: (sql) => enqueue(() => connection.exec(sql)),
    transaction: (work, options) => enqueue(() => runTransaction(connection, work, options)),
    // Queued, so requests already waiting finish first.
    close: () =>
      enqueue(async () => {
        await pglite.close();
        afterClose();
      }),
  };
}
