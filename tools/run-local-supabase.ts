// The local Supabase as the commands run it: its database (the data folder's PostgreSQL server,
// or the server SUPABASE_DB_URL names) and the local Supabase endpoint over it, on the address
// the settings give.
import { readFileSync } from "node:fs";
import {
  dataFolder,
  DataFolderLockedError,
  DataFolderUnusableError,
  holderOf,
  THROWAWAY_DATA,
} from "./local-supabase/database/data-folder.ts";
import { openLocalDatabase } from "./local-supabase/database/local-database.ts";
import { connectPool } from "./local-supabase/database/pool.ts";
import { startLocalSupabase, type LocalSupabase } from "./local-supabase/index.ts";
import type { LocalSettings } from "./settings.ts";

/**
 * Opens the database and starts the backend, logging to `log`. Throws DataFolderLockedError
 * when another process holds the data folder, and an EADDRINUSE error when the port is taken,
 * having changed nothing.
 */
export async function runLocalSupabase(
  settings: LocalSettings,
  log: (line: string) => void = console.log,
): Promise<LocalSupabase> {
  const database = settings.dbUrl
    ? connectPool({ url: settings.dbUrl })
    : await openLocalDatabase({
        dataDir: settings.dataDir,
        log,
        seed: settings.seedFile && readFileSync(settings.seedFile, "utf8"),
      });
  return startLocalSupabase({ database, port: settings.apiPort, log });
}

/**
 * For `npm start`, `dev` and `backend`: starts the backend, or, when its data folder or its port
 * is taken by another process or its data folder cannot be used, says so and exits, having
 * changed nothing.
 */
export async function runLocalSupabaseOrExit(settings: LocalSettings): Promise<LocalSupabase> {
  try {
    return await runLocalSupabase(settings);
  } catch (error) {
    if (error instanceof DataFolderLockedError || error instanceof DataFolderUnusableError)
      console.error(`\n  ${error.message.replaceAll("\n", "\n  ")}\n`);
    else if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      console.error(
        `\n  Port ${settings.apiPort} is taken: is another backend running? Set SUPABASE_API_PORT for another port.\n`,
      );
    } else throw error;
    process.exit(1);
  }
}

/**
 * Whether the local Supabase answering on this machine may be this project's: over another
 * server or on a throwaway cluster, nothing tells; on a data folder, only if a running process
 * holds that folder (a backend that answers while nobody holds it serves another folder, or
 * another project).
 */
export function mayServeThisProject(settings: LocalSettings): boolean {
  if (settings.dbUrl || settings.dataDir.startsWith(THROWAWAY_DATA)) return true;
  return holderOf(settings.dataDir) !== null;
}

function describeData(settings: LocalSettings): string {
  if (settings.dbUrl) return `PostgreSQL at ${new URL(settings.dbUrl).host}`;
  return dataFolder(settings.dataDir) ?? "a throwaway database, removed when this stops";
}

export function describeApi(settings: LocalSettings, backend: LocalSupabase | null): string {
  return backend
    ? `  API:   ${backend.url}  (local Supabase backend)\n  Data:  ${describeData(settings)}`
    : `  API:   ${settings.supabaseUrl}  (configured Supabase project)`;
}
