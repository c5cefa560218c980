// A new Supabase project for the deploy's tests, as an owner's is before the first deploy: a fresh
// database on a server of its own, set up as a new hosted project is (Supabase's roles and
// privileges, no migration yet), its connection string as the dashboard gives it (the owner's
// user and password, which the server checks: a wrong one is refused), and the local Supabase
// answering over it as the project's API does.
import { randomUUID } from "node:crypto";
import { chmodSync, cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SUPERUSER, type PostgresMajor } from "../../tools/local-supabase/database/cluster.ts";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { connectPool } from "../../tools/local-supabase/database/pool.ts";
import {
  LOGIN_ROLE,
  OWNER,
  prepareSupabaseProject,
} from "../../tools/local-supabase/database/supabase-project.ts";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { withoutTestEnvironment } from "../test-environment.ts";
import { startPostgresServer, type PostgresServer } from "../support/postgres-server.ts";

/** The owner's password in the tests' connection strings. */
export const PASSWORD = "correct-horse-battery";

export interface NewProject {
  /** A folder holding a copy of supabase/, where the CLI runs (it writes supabase/.temp). */
  root: string;
  /** SUPABASE_DB_PUSH_URL, as the dashboard's Connect gives it (without TLS: the server offers none). */
  dbUrl: string;
  /** The same with another password. */
  wrongPasswordUrl: string;
  /** The owner's connection. */
  owner: Database;
  /** The pinned CLI's environment: a home of its own, no telemetry. */
  cliEnv: NodeJS.ProcessEnv;
  /**
   * Starts the project's API (the local Supabase over the database) on `port` (0: any free one).
   * It reads the tables once, as it starts (its schema cache): start it once the migrations are in.
   */
  startApi(port?: number): Promise<LocalSupabase>;
  close(): Promise<void>;
}

export async function newProject(major: PostgresMajor): Promise<NewProject> {
  const folder = mkdtempSync(join(tmpdir(), "deploy-project-"));
  const root = join(folder, "project");
  cpSync(new URL("../../supabase/", import.meta.url), join(root, "supabase"), {
    recursive: true,
    filter: (source) => !source.includes("/.temp"),
  });
  // The server's own clusters trust every local connection; this one, once set up, asks the
  // owner for the password, as a hosted project does.
  chmodSync(folder, 0o755);
  const hba = join(folder, "pg_hba.conf");
  const trustAll = "host all all 127.0.0.1/32 trust\n";
  writeFileSync(hba, trustAll, { mode: 0o644 });
  const server: PostgresServer = await startPostgresServer(major, { hba_file: hba });
  const database = `deploy_${randomUUID().replaceAll("-", "")}`;
  const admin = connectPool({ url: server.url(SUPERUSER, "postgres"), poolSize: 1 });
  await admin.exec(`create database ${database}`);
  await prepareSupabaseProject(server, database);
  await admin.exec(`alter role ${OWNER} password '${PASSWORD}'`);
  writeFileSync(hba, `host all ${OWNER} 127.0.0.1/32 scram-sha-256\n${trustAll}`);
  await admin.query("select pg_reload_conf()");
  await admin.close();
  const { hostname, port } = new URL(server.url(OWNER, database));
  const at = (password: string) =>
    `postgresql://${OWNER}:${password}@${hostname}:${port}/${database}?sslmode=disable`;
  const owner = connectPool({ url: at(PASSWORD).replace("?sslmode=disable", ""), poolSize: 1 });
  const apis: LocalSupabase[] = [];
  return {
    root,
    dbUrl: at(PASSWORD),
    wrongPasswordUrl: at("not-the-password"),
    owner,
    cliEnv: {
      ...withoutTestEnvironment(process.env),
      HOME: join(folder, "home"),
      SUPABASE_TELEMETRY_DISABLED: "1",
      DO_NOT_TRACK: "1",
    },
    async startApi(port = 0) {
      const api = connectPool({ url: server.url(LOGIN_ROLE, database), poolSize: 2 });
      const backend = await startLocalSupabase({ database: api, port, log: () => {} });
      apis.push(backend);
      return backend;
    },
    async close() {
      for (const api of apis) await api.close();
      await owner.close();
      await server.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
