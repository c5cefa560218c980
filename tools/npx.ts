// The command-line tools this project runs at one pinned version without installing them
// (the Supabase CLI, the hosts' CLIs): `npx --yes <package@version> <args>`, which fetches that
// version into npm's cache on first use. They stay out of package-lock.json, either because the
// registry lacks some platform's build (the Supabase CLI) or because they would double
// `npm install` for a command an owner runs once (the hosts').
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from "node:child_process";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";

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
 * `env` for a pinned tool. A caller may give the tool a home of its own (HOME: its login,
 * telemetry and traces); npm reads its cache and settings from the home too, so they stay where
 * they are, or the tool would be fetched anew into an empty cache on every run. npm's notices
 * stay out of the tool's output; its errors (no such version, no network) still show.
 */
function toolEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
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

export interface PinnedRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface PinnedOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  timeout?: number;
}

/** Runs `pkg` (`name@version`) with `args` in `cwd` to its end, and what it wrote. */
export function runPinnedSync(
  pkg: string,
  args: string[],
  { cwd, env = process.env, timeout }: PinnedOptions,
): PinnedRun {
  const run = npx(["--yes", pkg, ...args]);
  const { status, stdout, stderr } = spawnSync(run.command, run.args, {
    cwd,
    env: toolEnv(env),
    shell: run.shell,
    encoding: "utf8",
    timeout,
  });
  return { status, stdout, stderr };
}

/** Starts `pkg` with `args`: the child, for a caller that streams its output or answers its prompts. */
export function spawnPinned(
  pkg: string,
  args: string[],
  {
    cwd = process.cwd(),
    env = process.env,
    stdio = "pipe",
    detached = false,
  }: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    stdio?: StdioOptions;
    /** In a process group of its own (POSIX), which the caller stops whole: npx leaves the tool's own children when stopped alone. */
    detached?: boolean;
  } = {},
): ChildProcess {
  const run = npx(["--yes", pkg, ...args]);
  return spawn(run.command, run.args, { cwd, env: toolEnv(env), shell: run.shell, stdio, detached });
}

/** Runs `pkg` with `args` to its end without blocking: its status and what it wrote (each line also to `echo`, if given). */
export function runPinned(
  pkg: string,
  args: string[],
  {
    cwd,
    env = process.env,
    echo,
  }: { cwd?: string; env?: NodeJS.ProcessEnv; echo?: (chunk: string) => void } = {},
): Promise<PinnedRun> {
  const child = spawnPinned(pkg, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => ((stdout += chunk), echo?.(chunk)));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => ((stderr += chunk), echo?.(chunk)));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (status) => resolve({ status, stdout, stderr }));
  });
}
