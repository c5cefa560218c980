// Where things run locally, as the local commands (`npm start`, `dev`, `backend`, `sign-ups`)
// read it from the environment and the `.env` files (config/environment.ts, which the build
// reads too, so both agree on where the site sends its sign-ups).
import {
  apiPort,
  ConfigurationError,
  port,
  readEnvironment,
  supabaseUrl,
  usesLocalSupabase,
  type Environment,
} from "../config/environment.ts";

export interface LocalSettings {
  /** Where the site is served. */
  sitePort: number;
  /** This machine only, unless HOST says otherwise (0.0.0.0, say). */
  siteHost: string;
  /** Where the local Supabase answers: the Supabase CLI's API port unless told otherwise. */
  apiPort: number;
  /** Where the site's build sends sign-ups. */
  supabaseUrl: string;
  /** Whether that is the local Supabase, not a Supabase project elsewhere. */
  usesLocalSupabase: boolean;
  /** A PostgreSQL server for the local endpoint to use instead of its own (set up and migrated). */
  dbUrl: string | undefined;
  /** The local Supabase's data folder, in any of its spellings; `memory://` for a throwaway one. */
  dataDir: string;
  /** SQL run once when the local Supabase creates its database, as Supabase runs supabase/seed.sql. */
  seedFile: string | undefined;
}

/** The settings; a setting that makes no sense is a ConfigurationError. */
export function readLocalSettings(env: Environment = readEnvironment()): LocalSettings {
  return {
    sitePort: port(env, "PORT", 4321),
    siteHost: env.HOST ?? "127.0.0.1",
    apiPort: apiPort(env),
    supabaseUrl: supabaseUrl(env),
    usesLocalSupabase: usesLocalSupabase(env),
    dbUrl: env.SUPABASE_DB_URL,
    dataDir: env.SUPABASE_DATA_DIR ?? ".data",
    seedFile: env.SUPABASE_SEED_FILE,
  };
}

/** For the commands: the settings, or, when one makes no sense, the reason said and the process ended. */
export function localSettingsOrExit(): LocalSettings {
  try {
    return readLocalSettings();
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    console.error(`\n  ${error.message.replaceAll("\n", "\n  ")}\n`);
    process.exit(1);
  }
}
