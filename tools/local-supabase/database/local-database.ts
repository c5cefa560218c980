// The local Supabase's database: a PostgreSQL server on the data folder's cluster (or on a
// throwaway one for `memory://`), set up as a hosted Supabase project and migrated, reached as
// PostgREST reaches it, logged in as `authenticator` over a pool of connections.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startCluster, startThrowawayCluster, type PostgresCluster } from "./cluster.ts";
import { dataFolder, DataFolderUnusableError, lockDataFolder } from "./data-folder.ts";
import type { Database } from "./database.ts";
import { connectPool } from "./pool.ts";
import { LOGIN_ROLE, OWNER, setUpSupabaseProject } from "./supabase-project.ts";

/** The cluster's folder inside the data folder; the lock file sits beside it. */
export const CLUSTER_FOLDER = "postgresql";

/** The project's database, as on Supabase. */
const DATABASE = "postgres";

export interface LocalDatabaseOptions {
  /** The data folder, in any of its spellings (a path, `file://…`); `memory://` for a throwaway one. */
  dataDir: string;
  /** Receives a line per migration applied. */
  log?: (line: string) => void;
  /** SQL run once as the project's owner, right after the migrations have created the database (Supabase's seed.sql). */
  seed?: string;
}

/**
 * Takes the data folder (DataFolderLockedError when another process holds it, before any file
 * is touched), starts its server, sets the project up and applies pending migrations. Closing
 * the database stops the server and lets the folder go.
 */
export async function openLocalDatabase({
  dataDir,
  log = () => {},
  seed,
}: LocalDatabaseOptions): Promise<Database> {
  const folder = dataFolder(dataDir);
  const lock = folder === null ? null : lockDataFolder(folder);
  try {
    const cluster =
      folder === null
        ? await startThrowawayCluster()
        : await startCluster({ folder: clusterFolder(folder), durable: true });
    try {
      const { applied, created } = await setUpSupabaseProject(cluster, DATABASE);
      for (const file of applied) log(`Applied migration ${file}`);
      if (created && seed) await runAsOwner(cluster, seed);
      const api = connectPool({ url: cluster.url(LOGIN_ROLE, DATABASE) });
      return {
        ...api,
        close: async () => {
          await api.close();
          await cluster.stop();
          lock?.release();
        },
      };
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/** The cluster's folder in a data folder; one the previous engine (PGlite) left is refused. */
function clusterFolder(folder: string): string {
  if (existsSync(join(folder, "PG_VERSION"))) {
    throw new DataFolderUnusableError(
      `The data folder ${folder} holds a database of the previous embedded engine (PGlite), which ` +
        "PostgreSQL cannot open. Export its sign-ups with the version of the project that wrote it " +
        "(`npm run sign-ups -- export`), then give this one another folder with SUPABASE_DATA_DIR.",
    );
  }
  return join(folder, CLUSTER_FOLDER);
}

async function runAsOwner(cluster: PostgresCluster, sql: string): Promise<void> {
  const owner = connectPool({ url: cluster.url(OWNER, DATABASE), poolSize: 1 });
  await owner.exec(sql).finally(() => owner.close());
}
