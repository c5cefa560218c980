// A private PostgreSQL server for one test run: Debian's (or any local) PostgreSQL binaries,
// a cluster in a temporary folder, on a free port of 127.0.0.1, removed when stopped. As root
// (CI's machines), the server runs as the `postgres` user: initdb refuses to run as root.
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** The superuser the cluster is created with, as on Supabase. */
export const SUPERUSER = "supabase_admin";

const INSTALL_HINT =
  "install PostgreSQL (Debian/Ubuntu: `sudo apt-get install postgresql`; macOS: `brew install postgresql`)";

/**
 * Whether the real-PostgreSQL tier runs: on CI always (where a missing server must fail the
 * run, not skip it), elsewhere when a server is installed.
 */
export function postgresTierRuns(): boolean {
  return Boolean(process.env.CI) || findPostgresBinaries() !== null;
}

export const TIER_SKIPPED_WARNING = `⚠ SKIPPED: the real-PostgreSQL tier. No PostgreSQL server (initdb) was found; to run it, ${INSTALL_HINT}.`;

/** The folder holding initdb, pg_ctl and postgres; null when none is installed. */
export function findPostgresBinaries(): string | null {
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    // The newest installed major version.
    const versions = readdirSync(debian)
      .filter((version) => existsSync(join(debian, version, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return join(debian, versions[0]!, "bin");
  }
  const onPath = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).stdout.trim();
  return onPath ? dirname(onPath) : null;
}

export interface PostgresServer {
  host: string;
  port: number;
  /** A connection URL for `user` on `database` (trust authentication: no password). */
  url(user: string, database: string): string;
  stop(): Promise<void>;
}

export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = findPostgresBinaries();
  if (!bin) throw new Error(`No PostgreSQL server found: ${INSTALL_HINT}.`);
  const dir = mkdtempSync(join(tmpdir(), "early-access-postgres-"));
  const asOwner = ownerFor(dir);
  const dataDir = join(dir, "data");
  const port = await freePort();
  const run = (command: string, args: string[]) => {
    const [file, ...rest] = [...asOwner, join(bin, command), ...args];
    const { status, stdout, stderr } = spawnSync(file!, rest, { encoding: "utf8" });
    if (status !== 0) throw new Error(`${command} failed (exit ${status}):\n${stdout}\n${stderr}`);
  };

  // C.UTF-8, as hosted Supabase's databases are (supabase/postgres#696): lower(), upper() and
  // regular expressions treat letters beyond ASCII as a real project does.
  run("initdb", [
    "-D",
    dataDir,
    "-U",
    SUPERUSER,
    "--auth=trust",
    "-E",
    "UTF8",
    "--locale=C.UTF-8",
    "--no-sync",
  ]);
  const settings = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    // Room for several test files, each with its own pool, at once.
    "-c max_connections=300",
    // A throwaway cluster needs no crash safety, and is faster without it.
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
  ];
  run("pg_ctl", ["-D", dataDir, "-l", join(dir, "server.log"), "-o", settings.join(" "), "-w", "start"]);

  const host = "127.0.0.1";
  return {
    host,
    port,
    url: (user, database) => `postgres://${user}@${host}:${port}/${database}`,
    stop: async () => {
      run("pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** How to run the server's binaries: as `postgres` when we are root, else as ourselves. */
function ownerFor(dir: string): string[] {
  if (process.getuid?.() !== 0) return [];
  const id = (flag: string) => Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout);
  chownSync(dir, id("-u"), id("-g"));
  chmodSync(dir, 0o700);
  return ["runuser", "-u", "postgres", "--"];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
