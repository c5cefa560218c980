// Cloudflare's own serving of a folder, on this machine: `wrangler dev` at the deploy's pinned
// version, with the Worker's configuration the deploy uploads (tools/deploy/hosts/cloudflare.ts),
// so workerd answers as Cloudflare's edge does (`_headers`, `404.html` with status 404). For the
// deploy's tests and the outside checks: start it on a folder, ask it over plain HTTP, stop it.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnPinned } from "../../tools/npx.ts";
import { findFreePorts } from "../../tools/processes.ts";
import { WRANGLER, workerConfig } from "../../tools/deploy/hosts/cloudflare.ts";

export interface LocalWorker {
  /** http://127.0.0.1:<port> */
  url: string;
  stop(): Promise<void>;
}

/** How long wrangler may take to answer, on a machine shared with other work. */
const READY_WITHIN = 90_000;

/** Sends `signal` to the process group `pid` leads, if any of it is left. */
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group has exited already.
  }
}

/**
 * Serves `folder` as the deployed Worker would, on a free port of its own, until stopped;
 * `notFound` changes what it answers for a path it lacks (the fixtures' single-page fallback).
 */
export async function startWranglerDev(
  folder: string,
  notFound: "404-page" | "single-page-application" = "404-page",
): Promise<LocalWorker> {
  const home = mkdtempSync(join(tmpdir(), "wrangler-dev-"));
  const config = join(home, "wrangler.json");
  const worker = workerConfig(folder, "future-awaits") as { assets: { not_found_handling: string } };
  worker.assets.not_found_handling = notFound;
  writeFileSync(config, JSON.stringify(worker));
  const [port, inspector] = (await findFreePorts(2)) as [number, number];
  const child = spawnPinned(
    WRANGLER,
    [
      ...["dev", "--config", config, "--ip", "127.0.0.1", "--port", String(port)],
      ...["--inspector-port", String(inspector), "--persist-to", join(home, "state")],
      ...["--show-interactive-dev-session=false", "--live-reload=false"],
    ],
    {
      cwd: home,
      stdio: ["ignore", "pipe", "pipe"],
      // Stopped as a group: npx, wrangler's launcher, wrangler, and the workerd it starts.
      detached: true,
      env: {
        ...process.env,
        // Its logs and settings in the test's own folder, not the developer's.
        HOME: home,
        XDG_CONFIG_HOME: join(home, ".config"),
        // No call outside this machine: telemetry off, no banner (whose update check asks npm's
        // registry: wrangler-dist/cli.js, printWranglerBanner), and no fetch of the `cf` object
        // (miniflare's CLOUDFLARE_CF_FETCH_ENABLED: its fallback values instead).
        WRANGLER_SEND_METRICS: "false",
        WRANGLER_HIDE_BANNER: "true",
        CLOUDFLARE_CF_FETCH_ENABLED: "false",
      },
    },
  );
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    // Ctrl-C, as a developer stops it (it ignores SIGTERM); then the whole group, whatever is left.
    signalGroup(child.pid!, "SIGINT");
    await new Promise((wait) => setTimeout(wait, 1_000));
    signalGroup(child.pid!, "SIGKILL");
    rmSync(home, { recursive: true, force: true });
  };
  const deadline = Date.now() + READY_WITHIN;
  while (!/Ready on/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev did not start on ${url}:\n${output}`);
    }
    await new Promise((wait) => setTimeout(wait, 100));
  }
  return { url, stop };
}
