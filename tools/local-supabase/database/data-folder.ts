// One owner per data folder. A backend on a folder runs the PostgreSQL server of the cluster in
// it; a second backend on the same folder (`npm start` here, `npm run dev` there) must neither
// start a second server on it nor stop the first one's. So before anything else, the process
// takes the folder's lock file, and a second process is refused without having touched
// anything. The lock names its holder; one left behind by a process that was killed (its PID no
// longer running, a zombie, or another process's by now) is taken over at once. It is taken on the folder's canonical path, however the folder
// was spelled.
import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { join, resolve } from "node:path";

export const LOCK_FILE = "local-supabase.lock";

export interface Holder {
  pid: number;
  host: string;
  command: string;
  since: string;
}

export class DataFolderLockedError extends Error {
  readonly holder: Holder;

  constructor(dataDir: string, holder: Holder) {
    super(
      `The data folder ${dataDir} is in use by process ${holder.pid} (${holder.command}, since ${holder.since}).\n` +
        "Stop that process first, or give this one another folder with SUPABASE_DATA_DIR.",
    );
    this.holder = holder;
  }
}

/** A data folder the local Supabase cannot use, and why; nothing in it has been changed. */
export class DataFolderUnusableError extends Error {}

export interface DataFolderLock {
  release(): void;
}

/** The spelling of "no folder": a throwaway cluster, removed when the process exits. */
export const THROWAWAY_DATA = "memory://";

/**
 * The folder a data folder's spelling names: null for `memory://` (or nothing), else the path
 * with any `file://` taken off, resolved against the working directory, created when missing,
 * with every symlink followed. Two spellings of one folder (`file:///tmp/x`, `/tmp/x/`,
 * `../tmp/x`, a link to it) give the same path.
 */
export function dataFolder(spelling: string | null): string | null {
  if (!spelling || spelling.startsWith(THROWAWAY_DATA)) return null;
  const path = withoutFileScheme(spelling);
  if (path === "") throw new Error(`${spelling} names no folder.`);
  mkdirSync(resolve(path), { recursive: true });
  return realpathSync(resolve(path));
}

const withoutFileScheme = (spelling: string) =>
  spelling.startsWith("file://") ? spelling.slice("file://".length) : spelling;

/**
 * Whether a running process holds the folder, as spelled: its lock's holder, or null. Unlike
 * dataFolder(), creates nothing: a folder that does not exist has no holder.
 */
export function holderOf(spelling: string | null): Holder | null {
  if (!spelling || spelling.startsWith(THROWAWAY_DATA)) return null;
  const path = resolve(withoutFileScheme(spelling));
  if (!existsSync(path)) return null;
  const holder = readHolder(join(realpathSync(path), LOCK_FILE));
  return holder && holderRuns(holder) ? holder : null;
}

/** Takes the lock of a folder, given as dataFolder() returns it. */
export function lockDataFolder(dataDir: string): DataFolderLock {
  const lockPath = join(dataDir, LOCK_FILE);
  const me: Holder = {
    pid: process.pid,
    host: hostname(),
    command: process.argv.slice(1).join(" "),
    since: new Date().toISOString(),
  };
  // Written in full first, then linked into place: a lock file is never seen half written,
  // and linking fails if one exists, so only one process can create it.
  const draft = `${lockPath}.${process.pid}`;
  writeFileSync(draft, JSON.stringify(me));
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(draft, lockPath);
        return held(lockPath, me);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const holder = readHolder(lockPath);
      if (holder && holderRuns(holder)) throw new DataFolderLockedError(dataDir, holder);
      removeStale(lockPath, holder);
    }
    throw new Error(`Could not take the lock of the data folder ${dataDir}`);
  } finally {
    rmSync(draft, { force: true });
  }
}

function held(lockPath: string, me: Holder): DataFolderLock {
  // The lock goes with the process however it exits, short of being killed outright.
  const release = () => {
    process.off("exit", release);
    if (sameHolder(readHolder(lockPath), me)) rmSync(lockPath, { force: true });
  };
  process.on("exit", release);
  return { release };
}

/** The lock's holder; null when the file is gone or unreadable (left half-written by a crash). */
function readHolder(lockPath: string): Holder | null {
  try {
    return JSON.parse(readFileSync(lockPath, "utf8")) as Holder;
  } catch {
    return null;
  }
}

/**
 * Whether process `pid` runs (as any user). A zombie does not: a process killed outright stays
 * one, holding nothing, until its parent reaps it, which a parent that never waits (a container
 * without an init) never does.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists, as another user's.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const state = processState(pid);
  return state !== "Z" && state !== "X";
}

/** A process's state letter (R, S, D, Z…), from /proc on Linux, else from ps; null if unknown. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // After the command's name, in parentheses, which may itself hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) || null;
  } catch {
    if (process.platform === "linux" || process.platform === "win32") return null;
  }
  const { stdout } = spawnSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" });
  return stdout?.trim()[0] ?? null;
}

/**
 * When process `pid` started, in ms since the epoch, to the second: from /proc on Linux; null
 * elsewhere or when it is gone.
 */
function startedAt(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22, counted from the state (field 3): clock ticks after boot, at 100 a second.
    const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[22 - 3]);
    const bootSeconds = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1]);
    return Number.isFinite(ticks) && bootSeconds ? bootSeconds * 1000 + ticks * 10 : null;
  } catch {
    return null;
  }
}

/**
 * Whether the lock's holder still runs: its process, neither a zombie nor a later process that
 * was given the same PID (one started after the lock was taken). A process on another machine
 * (a shared folder) cannot be checked: it is taken to run.
 */
function holderRuns({ pid, host, since }: Holder): boolean {
  if (host !== hostname()) return true;
  if (!isRunning(pid)) return false;
  const started = startedAt(pid);
  // Two seconds of slack: the boot time is known to the second.
  return started === null || !(started > Date.parse(since) + 2_000);
}

const sameHolder = (a: Holder | null, b: Holder | null) => a?.pid === b?.pid && a?.since === b?.since;

/**
 * Takes a stale lock out of the way, atomically: it is moved aside, and only if what was moved
 * is still the stale holder's (not a lock another process took meanwhile) is it deleted.
 */
function removeStale(lockPath: string, stale: Holder | null): void {
  const aside = `${lockPath}.stale.${process.pid}`;
  try {
    renameSync(lockPath, aside);
  } catch {
    return; // already gone: try again
  }
  if (!sameHolder(readHolder(aside), stale)) {
    try {
      linkSync(aside, lockPath);
    } catch {
      // Another process holds the folder by now; the next attempt finds it running.
    }
  }
  rmSync(aside, { force: true });
}
