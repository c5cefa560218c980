// The world every test runs in, and nothing of the developer's: free ports of its own for the
// site and its backend, a build folder of its own, a throwaway database. Every setting the
// project reads is set here explicitly, so that a `.env` (which the commands read after the
// process's own environment) can move nothing, and a running `npm start` is never reused.
//
// Chosen once per run, by `npm test` or by whichever of Vitest and Playwright starts first, and
// handed down through the environment: every process the tests start inherits it.
import { mkdtempSync, rmSync, statfsSync } from "node:fs";
import { platform, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LOCAL_PUBLISHABLE_KEY } from "../config/local-supabase.ts";
import { freePorts } from "../tools/processes.ts";

export interface TestEnvironment {
  /** Where the site is served: http://127.0.0.1:<free port>. */
  siteUrl: string;
  /** Where the local Supabase answers, and the build sends sign-ups. */
  apiUrl: string;
  /** The build the tests serve and read. */
  dist: string;
}

/** Marks a process whose environment has been set up already (its value: the run's folder). */
const RUN_FOLDER = "TEST_RUN_FOLDER";

/** Lifts the per-address limits: every browser test signs up from 127.0.0.1. */
export const LIFT_SIGN_UP_LIMITS_FILE = fileURLToPath(
  new URL("./support/lift-sign-up-limits.sql", import.meta.url),
);

/**
 * Sets this process's environment up for a test run, once; later calls, in this process or in
 * any process it starts, return the same settings.
 */
export function useTestEnvironment(): TestEnvironment {
  if (!process.env[RUN_FOLDER]) Object.assign(process.env, chooseTestEnvironment());
  return {
    siteUrl: process.env.SITE_URL!,
    apiUrl: process.env.PUBLIC_SUPABASE_URL!,
    dist: join(process.env[RUN_FOLDER]!, "dist"),
  };
}

/** Linux's folder in memory (tmpfs), and the room a run needs there at most, with margin. */
const IN_MEMORY = "/dev/shm";
const ROOM_NEEDED = 4 * 1024 ** 3;

/**
 * Where the run keeps its temporary files: in memory when the machine has one with room (Linux's
 * /dev/shm), else the system's temporary folder. A run creates and deletes tens of thousands of
 * files (each test file's copy of the database holds thousands of sequences, a file each, and
 * every cluster and data folder more), and on a disk that is where its system time went: ext4
 * searches longer for a free inode the more were deleted in the last seconds. Nothing a test proves
 * depends on the disk under it: no test can cut the power, and a killed server's files survive in
 * memory as on a disk. Docker's /dev/shm (64 MB) has no room, and is passed by.
 */
function temporaryFolder(): string {
  if (platform() !== "linux") return tmpdir();
  try {
    const { bavail, bsize } = statfsSync(IN_MEMORY);
    return bavail * bsize >= ROOM_NEEDED ? IN_MEMORY : tmpdir();
  } catch {
    return tmpdir();
  }
}

function chooseTestEnvironment(): Record<string, string> {
  const [sitePort, apiPort] = freePorts(2) as [number, number];
  // The run's own folder stays where it always was: Astro moves the build into it by renaming,
  // which fails across devices.
  const folder = mkdtempSync(join(tmpdir(), "future-awaits-tests-"));
  // The process that chose the run's folder removes it (its build, its reports) when it exits.
  process.on("exit", () => rmSync(folder, { recursive: true, force: true }));
  return {
    ...settings(folder, sitePort, apiPort),
    // Node keeps the code it compiles for every process of the run (the owner's command, npm
    // start, the builds, the test workers: hundreds of starts of the same modules), so each start
    // after the first skips most of its compiling. Not a setting of the project: nothing a test
    // proves depends on it, and the developer's commands the tests run keep it too.
    NODE_COMPILE_CACHE: join(folder, "node-compile-cache"),
    // Astro's telemetry off, its documented way, for every Astro command of the run (the build,
    // the builds and servers the tests start): no notice in the run's output, and nothing written
    // to the developer's own Astro settings (~/.config/astro), which the notice otherwise records.
    ASTRO_TELEMETRY_DISABLED: "1",
    // Every other temporary file of every process of the run (Node's tmpdir(), PostgreSQL's, the
    // browser's), in the shared folder, not one of the run's own, so that the next run clears
    // throwaway clusters a killed run left there (startThrowawayCluster).
    TMPDIR: temporaryFolder(),
  };
}

/** Every variable a test run sets: each setting the project reads, and the run's own markers. */
function settings(folder: string, sitePort: number, apiPort: number): Record<string, string> {
  return {
    [RUN_FOLDER]: folder,
    PORT: String(sitePort),
    HOST: "127.0.0.1",
    SITE_URL: `http://127.0.0.1:${sitePort}`,
    SUPABASE_API_PORT: String(apiPort),
    PUBLIC_SUPABASE_URL: `http://127.0.0.1:${apiPort}`,
    PUBLIC_SUPABASE_PUBLISHABLE_KEY: LOCAL_PUBLISHABLE_KEY,
    SUPABASE_DATA_DIR: "memory://",
    SUPABASE_SEED_FILE: LIFT_SIGN_UP_LIMITS_FILE,
    // The owner's command then uses the local stack's key, whatever `.env` holds for a project.
    SUPABASE_SECRET_KEY: "",
    // Empty counts as unset (config/environment.ts), and overrides whatever `.env` says.
    SUPABASE_DB_URL: "",
  };
}

/**
 * `env` without anything useTestEnvironment() set: what a developer's own command would see,
 * for tests that run one (which then reads `.env`, or chooses a test run of its own).
 */
export function withoutTestEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const set = new Set(Object.keys(settings("", 0, 0)));
  return Object.fromEntries(Object.entries(env).filter(([name]) => !set.has(name)));
}
