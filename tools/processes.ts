// Running package CLIs with the same Node that runs us, stopping cleanly on Ctrl-C, and finding
// free ports for the servers the tests and benches start.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The file of a package's command, read from its package.json `bin`. */
export function packageBin(name: string): string {
  // require.resolve rather than import.meta.resolve, which Vite's module runner (a Vitest
  // global set-up) lacks.
  const manifest = createRequire(import.meta.url).resolve(`${name}/package.json`);
  const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin: string | Record<string, string> };
  const file = typeof bin === "string" ? bin : Object.values(bin)[0]!;
  return join(dirname(manifest), file);
}

export function astro(...args: string[]): ChildProcess {
  return spawn(process.execPath, [packageBin("astro"), ...args], { stdio: "inherit" });
}

export function exited(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
}

/** Runs `stop` once on SIGINT, SIGTERM or SIGHUP (the terminal closed), then exits. */
export function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = async () => {
    if (stopping) return;
    stopping = true;
    await stop();
    process.exit(0);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, handler);
}

/**
 * Ports that nothing listens on now, found synchronously (the configs that need them are read
 * synchronously) by a child that binds port 0 and reports what it got.
 */
export function freePorts(count: number): number[] {
  const script = `
    const net = require("node:net");
    const servers = Array.from({ length: ${count} }, () => net.createServer());
    Promise.all(servers.map((s) => new Promise((ok) => s.listen(0, "127.0.0.1", ok)))).then(() => {
      console.log(servers.map((s) => s.address().port).join(" "));
      servers.forEach((s) => s.close());
    });`;
  const { stdout, status } = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
  if (status !== 0) throw new Error("Could not find free ports for the tests");
  return stdout.trim().split(" ").map(Number);
}
