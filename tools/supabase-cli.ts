// `npm run supabase -- <command>`: the Supabase CLI at the one version this project pins, as
// `npx --yes <SUPABASE_CLI> <command>` runs it (tools/npx.ts). It stays out of package-lock.json: the registry this project installs from has this
// version's binary (@supabase/cli-<platform>) for linux-x64 alone, and the lock must install on
// every platform (tests/install). The owner, GitHub's migrations' job and the deploy's tests all
// run the CLI from here, so a new pin is this line, and the documents that name the version
// (tests/docs/supabase-cli.test.ts holds them to it).
import { runPinnedSync, spawnPinned, type PinnedOptions, type PinnedRun } from "./npx.ts";

export const SUPABASE_CLI = "supabase@3.1.0";

/**
 * How the owner pushes this repository's migrations to the live project, with this CLI: every
 * message and document that says how words it so (tests/docs/deploy-command.test.ts holds them).
 * The CLI 3.x pushes to the local database without `--remote`.
 */
export const DEPLOY_COMMAND = "npm run supabase -- db push --remote";

/** Runs the pinned CLI with `args` in `cwd` to its end, and what it wrote (for tests and tools). */
export function runSupabase(args: string[], options: PinnedOptions): PinnedRun {
  return runPinnedSync(SUPABASE_CLI, args, options);
}

if (import.meta.main) {
  const child = spawnPinned(SUPABASE_CLI, process.argv.slice(2), { stdio: "inherit" });
  // Ctrl-C reaches the CLI from the terminal on its own; a stop sent to us alone is passed on.
  process.on("SIGINT", () => {});
  for (const signal of ["SIGTERM", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
  // The CLI's status is ours.
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
