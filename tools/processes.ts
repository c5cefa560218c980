// Running package CLIs with the same Node that runs us, stopping cleanly on Ctrl-C, reading the
// end of what one printed, and finding free ports for the servers the tests and benches start.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { stripVTControlCharacters } from "node:util";

/**
 * The last `count` lines a command printed, as an owner's message quotes them: without colours
 * (codes in a log or an annotation), blank lines or a stack's frames (where in the command, not
 * what happened).
 */
export function lastLines(output: string, count: number): string[] {
  return stripVTControlCharacters(output)
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "" && !/^\s+at /.test(line))
    .slice(-count);
}

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
 * Where free ports are looked for: below the ports the system hands out for outgoing connections
 * (Linux's ip_local_port_range, from 32768; macOS's and Windows', from 49152). A port taken from
 * that range, as binding port 0 takes one, can be taken again by any connection a busy run opens
 * (to PostgreSQL, to the site) before its server binds it: "Port … is taken" was seen so.
 */
function portRange(): [number, number] {
  let ephemeral = 32768;
  try {
    ephemeral = Math.min(
      ephemeral,
      Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").split(/\s+/)[0]),
    );
  } catch {
    // Not Linux: its range starts higher.
  }
  return [20000, ephemeral];
}

/** Whether `port` (0: any the system chooses) can be bound on 127.0.0.1 now: the port, else 0. */
function bindable(port: number): Promise<number> {
  return new Promise((done) => {
    const server = createServer().once("error", () => done(0));
    server.listen(port, "127.0.0.1", () => {
      const bound = (server.address() as AddressInfo).port;
      server.close(() => done(bound));
    });
  });
}

/**
 * `count` ports that nothing listens on now, chosen at random in portRange() (port 0, wherever the
 * system chooses, where that range is too small), each checked by binding it.
 */
export async function findFreePorts(count: number): Promise<number[]> {
  const [low, high] = portRange();
  const ports: number[] = [];
  while (ports.length < count) {
    const port = await bindable(high - low >= 1000 ? low + Math.floor(Math.random() * (high - low)) : 0);
    if (port && !ports.includes(port)) ports.push(port);
  }
  return ports;
}

/**
 * findFreePorts, synchronously (the configs that need ports are read synchronously), in a child
 * process.
 */
export function freePorts(count: number): number[] {
  const script = `const { findFreePorts } = await import(${JSON.stringify(import.meta.url)});
    console.log((await findFreePorts(${count})).join(" "));`;
  const { stdout, status } = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  if (status !== 0) throw new Error("Could not find free ports for the tests");
  return stdout.trim().split(" ").map(Number);
}
