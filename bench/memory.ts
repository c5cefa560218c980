// `npm run bench:memory`: how soon `npm start` answers and how much memory it holds, from the
// moment it answers until it has sat idle for a minute, on a new data folder (as a first start
// creates it) and again on the same folder (as every later start opens it). The memory is that
// of every process `npm start` runs (Node and the database server's processes under it). Runs
// `npm run preview` (npm start without the build, so dist/ must exist) on ports of its own.
// Prints figures and writes them to its file in bench/results/; never fails on them.
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOCAL_SECRET_KEY } from "../config/local-supabase.ts";
import { npmScriptArgs } from "../tools/npm-script.ts";
import { freePorts } from "../tools/processes.ts";
import { table, writeResults } from "./support.ts";

const SAMPLE_AT_SECONDS = [5, 10, 30, 60];

const mb = (kib: number) => `${Math.round(kib / 1024)} MB`;

/** `pid` and every process under it, with its resident memory in KiB, as `ps` reports them. */
function tree(pid: number): Array<{ pid: number; rss: number }> {
  const all = execFileSync("ps", ["-A", "-o", "pid=,ppid=,rss="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number, number]);
  const found = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [child, parent] of all) {
      if (found.has(parent) && !found.has(child)) grew = found.add(child).size > 0;
    }
  }
  return all.filter(([child]) => found.has(child)).map(([child, , rss]) => ({ pid: child, rss }));
}

/** Resident memory of `pid` and its descendants, in KiB. */
const rss = (pid: number) => tree(pid).reduce((sum, process) => sum + process.rss, 0);

/** The most each process ever held, summed, where the kernel tells (Linux). */
function peak(pid: number): number | null {
  let sum = 0;
  for (const process of tree(pid)) {
    const status = `/proc/${process.pid}/status`;
    if (!existsSync(status)) return null;
    sum += Number(/VmHWM:\s+(\d+)/.exec(readFileSync(status, "utf8"))?.[1]);
  }
  return sum;
}

/** Polls until the API answers a read; resolves with the milliseconds since `since`. */
async function firstAnswer(apiUrl: string, since: number): Promise<number> {
  for (;;) {
    try {
      const response = await fetch(`${apiUrl}/rest/v1/early_access?select=id&limit=1`, {
        headers: { apikey: LOCAL_SECRET_KEY },
      });
      await response.arrayBuffer();
      if (response.status === 200) return performance.now() - since;
    } catch {
      // Not listening yet.
    }
    await new Promise((wait) => setTimeout(wait, 5));
  }
}

async function measure(label: string, dataDir: string): Promise<string[]> {
  const [sitePort, apiPort] = freePorts(2) as [number, number];
  const spawned = performance.now();
  const child = spawn(process.execPath, npmScriptArgs("preview"), {
    env: {
      ...process.env,
      PORT: String(sitePort),
      SUPABASE_API_PORT: String(apiPort),
      SUPABASE_DATA_DIR: dataDir,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
  const exited = new Promise<never>((_, failed) =>
    child.once("exit", (code) => failed(new Error(`npm start exited (${code}) before it answered`))),
  );
  const answered = await Promise.race([firstAnswer(`http://127.0.0.1:${apiPort}`, spawned), exited]);
  await new Promise<void>((ready) => {
    const check = () => (output.includes("Site:") ? ready() : setTimeout(check, 5));
    check();
  });
  // One visit, so the static host has read and compressed the page as it would for a visitor.
  await fetch(`http://127.0.0.1:${sitePort}/`, { headers: { "accept-encoding": "br" } });

  const started = Date.now();
  const samples: string[] = [];
  for (const seconds of SAMPLE_AT_SECONDS) {
    await new Promise((wait) => setTimeout(wait, started + seconds * 1000 - Date.now()));
    samples.push(mb(rss(child.pid!)));
  }
  const highest = peak(child.pid!);
  const processes = tree(child.pid!).length;
  child.kill("SIGINT");
  await new Promise((exited) => child.on("exit", exited));
  return [
    label,
    `${Math.round(answered)} ms`,
    String(processes),
    ...samples,
    highest === null ? "–" : mb(highest),
  ];
}

if (!existsSync("dist/index.html")) throw new Error("No build in dist/: run `npm run build` first.");
const root = mkdtempSync(join(tmpdir(), "memory-bench-"));
// As root, PostgreSQL runs as the postgres user, who must pass through to the data folder.
chmodSync(root, 0o711);
const dataDir = join(root, "data");
try {
  const header = [
    "data folder",
    "first answer",
    "processes",
    ...SAMPLE_AT_SECONDS.map((s) => `${s} s`),
    "peak",
  ];
  const rows = [await measure("new", dataDir), await measure("existing", dataDir)];
  console.log(`\`npm start\` (without the build): time to the API's first answer, then resident memory:\n`);
  console.log(table(header, rows));
  await writeResults("memory", { header, rows });
} finally {
  rmSync(root, { recursive: true, force: true });
}
