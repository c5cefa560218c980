// `npm run bench:abuse [-- --connections N --seconds S]`: what one abusive client costs
// everyone else. The embedded backend (`npm run backend`, on a data folder of its own) is
// flooded from 127.0.0.1 by 350 connections at a time, each posting 1 MB of `[{},{},…]` (which
// the database can only refuse) and reconnecting as soon as it is answered, while visitors from
// other addresses sign up once each, ten a second. Prints the visitors' latencies and the
// backend's resident memory before, during and after the flood, with the targets; never fails
// on them. Linux only (other loopback addresses). The flood comes from a process of its own
// (this script with --attack-port), as from an attacker's machine: its work must not slow down
// the side that measures.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { LOCAL_PUBLISHABLE_KEY } from "../../server/backend/keys.ts";
import { freePorts, LIFT_SIGN_UP_LIMITS_FILE } from "../test-environment.ts";
import { runBackend } from "./support.ts";

const { values } = parseArgs({
  options: {
    connections: { type: "string", default: "350" },
    seconds: { type: "string", default: "30" },
    "attack-port": { type: "string" },
  },
});
const CONNECTIONS = Number(values.connections);
const FLOOD_MS = Number(values.seconds) * 1000;

const sleep = (ms: number) => new Promise((resume) => setTimeout(resume, ms));

/** CONNECTIONS sockets from 127.0.0.1, each posting 1 MB again as soon as it is answered. */
function flood(port: number): void {
  // Just under the gateway's 1 MiB limit: valid JSON the database would read, then refuse.
  const body = Buffer.from(`[${"{},".repeat(349_000)}{}]`);
  const head =
    `POST /rest/v1/early_access HTTP/1.1\r\nHost: h\r\napikey: ${LOCAL_PUBLISHABLE_KEY}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const attack = () => {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.on("close", () => setImmediate(attack));
    socket.on("data", () => socket.destroy());
    socket.write(head);
    socket.write(body);
  };
  for (let index = 0; index < CONNECTIONS; index++) attack();
}

/** One visitor's sign-up from `address`: its latency in milliseconds, or why it failed. */
function visit(port: number, address: string, n: number): Promise<number | string> {
  const started = performance.now();
  return new Promise((resolve) => {
    const outgoing = request(
      `http://127.0.0.1:${port}/rest/v1/early_access`,
      {
        method: "POST",
        localAddress: address,
        headers: { apikey: LOCAL_PUBLISHABLE_KEY, "content-type": "application/json" },
        timeout: 20_000,
      },
      (response) => {
        response.resume();
        response.on("end", () =>
          resolve(
            response.statusCode === 201 ? performance.now() - started : `status ${response.statusCode}`,
          ),
        );
      },
    );
    outgoing.on("error", (error) => resolve(error.message));
    outgoing.on("timeout", () => outgoing.destroy(new Error("timed out")));
    outgoing.end(JSON.stringify({ email: `visitor-${n}-${Date.now()}@example.com` }));
  });
}

/** Visitors, ten a second, each from an address of its own, for `ms`. */
async function visitors(port: number, ms: number, first: number): Promise<Array<number | string>> {
  const until = Date.now() + ms;
  const visits: Array<Promise<number | string>> = [];
  for (let n = first; Date.now() < until; n++) {
    visits.push(visit(port, `127.1.${(n >> 8) & 255}.${n & 255}`, n));
    await sleep(100);
  }
  return Promise.all(visits);
}

const percentile = (times: number[], share: number) =>
  times[Math.min(times.length - 1, Math.ceil(share * times.length) - 1)] ?? NaN;

/** A table row, and the p99 of the sign-ups that succeeded. */
function summarise(label: string, visits: Array<number | string>): { row: string; p99: number } {
  const times = visits.filter((visit): visit is number => typeof visit === "number").sort((a, b) => a - b);
  const failures = new Map<string, number>();
  for (const visit of visits)
    if (typeof visit === "string") failures.set(visit, (failures.get(visit) ?? 0) + 1);
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  const why = [...failures].map(([reason, count]) => `${count} × ${reason}`).join(", ");
  const p99 = percentile(times, 0.99);
  return {
    row: `| ${label} | ${visits.length} | ${why || "0"} | ${ms(percentile(times, 0.5))} | ${ms(p99)} | ${ms(times.at(-1) ?? NaN)} |`,
    p99,
  };
}

const rssMb = (pid: number) =>
  Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" })) / 1024;

async function bench(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), "abuse-bench-"));
  try {
    await benchOn(folder);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The bench, with the backend's data in `folder`. */
async function benchOn(folder: string): Promise<void> {
  const [port] = freePorts(1) as [number];
  const backend = await runBackend({
    SUPABASE_API_PORT: String(port),
    PUBLIC_SUPABASE_URL: `http://127.0.0.1:${port}`,
    SUPABASE_DATA_DIR: join(folder, "data"),
    // The visitors come from many addresses of few networks: their own limits are not measured.
    SUPABASE_SEED_FILE: LIFT_SIGN_UP_LIMITS_FILE,
    SUPABASE_DB_URL: "",
  });
  try {
    await visitors(port, 3_000, 0); // warm-up
    await sleep(10_000);
    const idle = rssMb(backend.pid);
    const quiet = summarise("before the flood", await visitors(port, 5_000, 1_000));

    const attacker = spawn(
      process.execPath,
      [process.argv[1]!, "--attack-port", String(port), "--connections", String(CONNECTIONS)],
      { stdio: "ignore" },
    );
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(backend.pid))), 500);
    const flooded = summarise("during the flood", await visitors(port, FLOOD_MS, 2_000));
    attacker.kill("SIGKILL");
    clearInterval(sampler);
    await sleep(20_000);
    const after = rssMb(backend.pid);

    console.log(
      `One client (127.0.0.1) holding ${CONNECTIONS} connections that post 1 MB bodies, for ${FLOOD_MS / 1000} s;`,
    );
    console.log("visitors from other addresses sign up ten a second.\n");
    console.log("| visitors | sign-ups | failed | p50 | p99 | slowest |");
    console.log("| --- | --- | --- | --- | --- | --- |");
    console.log(quiet.row);
    console.log(flooded.row);
    console.log(
      `\nThe backend's resident memory: idle ${idle.toFixed(0)} MB, peak ${peak.toFixed(0)} MB, ` +
        `20 s after the flood ${after.toFixed(0)} MB.\n`,
    );
    const verdict = (holds: boolean) => (holds ? "holds" : "MISSED");
    console.log(
      `Target: visitors' p99 during the flood under 1 s: ${verdict(flooded.p99 < 1_000)} (${flooded.p99.toFixed(0)} ms)`,
    );
    console.log(
      `Target: memory after the flood within 20% of idle: ${verdict(after <= idle * 1.2)} (${((after / idle - 1) * 100).toFixed(0)}%)`,
    );
  } finally {
    await backend.stop();
  }
}

if (values["attack-port"]) flood(Number(values["attack-port"]));
else await bench();
