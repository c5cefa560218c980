// `npm run supabase -- <command>`: the Supabase CLI at the one version this project pins, as
// `npx --yes <SUPABASE_CLI> <command>` runs it. npm fetches that version into its cache on first
// use. It stays out of package-lock.json: the registry this project installs from has this
// version's binary (@supabase/cli-<platform>) for linux-x64 alone, and the lock must install on
// every platform (tests/install). The owner, GitHub's migrations' job and the deploy's tests all
// run the CLI from here, so a new pin is this line, and the documents that name the version
// (tests/docs/supabase-cli.test.ts holds them to it).
import { spawn, spawnSync } from "node:child_process";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";

export const SUPABASE_CLI = "supabase@3.1.0";

/**
 * How the owner pushes this repository's migrations to the live project, with this CLI: every
 * message and document that says how words it so (tests/docs/deploy-command.test.ts holds them).
 * The CLI 3.x pushes to the local database without `--remote`.
 */
export const DEPLOY_COMMAND = "npm run supabase -- db push --remote";

/** How to start npx: through npm's own script when npm started us (no shell needed), else from PATH. */
function npx(args: string[]): { command: string; args: string[]; shell: boolean } {
  const npm = process.env.npm_execpath; // set by `npm run`, `npm test` and `npx`
  if (npm && basename(npm) === "npm-cli.js") {
    return { command: process.execPath, args: [join(dirname(npm), "npx-cli.js"), ...args], shell: false };
  }
  // Windows' npx is npx.cmd, which Node starts only through a shell.
  const windows = process.platform === "win32";
  return { command: windows ? "npx.cmd" : "npx", args, shell: windows };
}

/**
 * `env` for the CLI. A caller may give the CLI a home of its own (HOME: its login, telemetry and
 * traces); npm reads its cache and settings from the home too, so they stay where they are, or
 * the CLI would be fetched anew into an empty cache on every run. npm's notices stay out of the
 * CLI's output; its errors (no such version, no network) still show.
 */
function cliEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const cache =
    process.platform === "win32"
      ? join(process.env.LOCALAPPDATA ?? homedir(), "npm-cache")
      : join(homedir(), ".npm");
  return {
    npm_config_cache: process.env.npm_config_cache || cache,
    npm_config_userconfig: process.env.npm_config_userconfig || join(homedir(), ".npmrc"),
    ...env,
    npm_config_update_notifier: "false",
    npm_config_loglevel: "error",
  };
}

export interface SupabaseRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the pinned CLI with `args` in `cwd` to its end, and what it wrote (for tests and tools). */
export function runSupabase(
  args: string[],
  { cwd, env = process.env, timeout }: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number },
): SupabaseRun {
  const run = npx(["--yes", SUPABASE_CLI, ...args]);
  const { status, stdout, stderr } = spawnSync(run.command, run.args, {
    cwd,
    env: cliEnv(env),
    shell: run.shell,
    encoding: "utf8",
    timeout,
  });
  return { status, stdout, stderr };
}

if (import.meta.main) {
  const run = npx(["--yes", SUPABASE_CLI, ...process.argv.slice(2)]);
  const child = spawn(run.command, run.args, {
    env: cliEnv(process.env),
    shell: run.shell,
    stdio: "inherit",
  });
  // Ctrl-C reaches the CLI from the terminal on its own; a stop sent to us alone is passed on.
  process.on("SIGINT", () => {});
  for (const signal of ["SIGTERM", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
  // The CLI's status is ours.
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
