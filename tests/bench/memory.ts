// `npm run bench:memory`: how much memory `npm start` holds, from the moment it answers until it
// has sat idle for a minute, on a new data folder (as a first start creates it) and again on the
// same folder (as every later start opens it). Runs `npm run preview` (npm start without the
// build, so dist/ must exist) on ports of its own. Prints figures, never fails on them.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { npmScriptArgs } from "../npm-script.ts";

const SAMPLE_AT_SECONDS = [5, 10, 30, 60];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const mb = (kib: number) => `${Math.round(kib / 1024)} MB`;

/** Resident memory of `pid` in KiB, as `ps` reports it (Linux and macOS). */
const rss = (pid: number) =>
  Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" }));

/** The most it ever held, where the kernel tells (Linux). */
function peak(pid: number): number | null {
  const status = `/proc/${pid}/status`;
  if (!existsSync(status)) return null;
  return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(status, "utf8"))?.[1]);
}

async function measure(label: string, dataDir: string): Promise<string> {
  const [sitePort, apiPort] = [await freePort(), await freePort()];
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
  await new Promise<void>((ready) =>
    child.stdout!.on("data", (chunk: Buffer) => (output += chunk).includes("Site:") && ready()),
  );
  child.stdout!.resume();
  // One visit, so the static host has read and compressed the page as it would for a visitor.
  await fetch(`http://127.0.0.1:${sitePort}/`, { headers: { "accept-encoding": "br" } });

  const started = Date.now();
  const samples: string[] = [];
  for (const seconds of SAMPLE_AT_SECONDS) {
    await new Promise((wait) => setTimeout(wait, started + seconds * 1000 - Date.now()));
    samples.push(mb(rss(child.pid!)));
  }
  const highest = peak(child.pid!);
  child.kill("SIGINT");
  await new Promise((exited) => child.on("exit", exited));
  return `| ${label} | ${samples.join(" | ")} | ${highest === null ? "–" : mb(highest)} |`;
}

if (!existsSync("dist/index.html")) throw new Error("No build in dist/: run `npm run build` first.");
const dataDir = join(mkdtempSync(join(tmpdir(), "memory-bench-")), "data");
try {
  console.log(`\`npm start\` (without the build), resident memory after it answers:\n`);
  console.log(`| data folder | ${SAMPLE_AT_SECONDS.map((s) => `${s} s`).join(" | ")} | peak |`);
  console.log(`| --- | ${SAMPLE_AT_SECONDS.map(() => "---").join(" | ")} | --- |`);
  console.log(await measure("new", dataDir));
  console.log(await measure("existing", dataDir));
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
