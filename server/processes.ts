// Running Astro's CLI with the same Node that runs us, and stopping cleanly on Ctrl-C.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const ASTRO_BIN = fileURLToPath(import.meta.resolve("astro/bin/astro.mjs"));

export function astro(...args: string[]): ChildProcess {
  return spawn(process.execPath, [ASTRO_BIN, ...args], { stdio: "inherit" });
}

export function exited(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
}

/** Runs `stop` once on SIGINT or SIGTERM, then exits. */
export function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = async () => {
    if (stopping) return;
    stopping = true;
    await stop();
    process.exit(0);
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
}
