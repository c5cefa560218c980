// `npm run bench:export`: how much memory `npm run sign-ups -- export` holds as the list grows
// from 10,000 to 100,000 sign-ups, and how long it takes: with the backend running in a process
// of its own (the command is then only the client), and with none running (the command opens the
// data folder itself, its PostgreSQL server included). Flat memory is the promise: pages of 1,000
// rows, written as they come. Data folders and ports of its own; prints figures and writes them to
// its file in bench/results/, never fails on them.
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openLocalDatabase } from "../tools/local-supabase/database/local-database.ts";
import { runNpmScript } from "../tools/npm-script.ts";
import { freePorts } from "../tools/processes.ts";
import { LOCAL_ONLY, startLocalSupabaseProcess, table, writeResults } from "./support.ts";

const SIZES = [10_000, 100_000];

/**
 * Reports the process's peak resident memory (KiB) on stderr as it exits: Linux's VmHWM, which
 * starts afresh with the program (getrusage's maxRSS would count this bench's own memory, which
 * the child held between fork and exec).
 */
const REPORT_PEAK =
  "data:text/javascript," +
  encodeURIComponent(`import { readFileSync } from "node:fs";
    process.on("exit", () => {
      const peak = /VmHWM:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1];
      process.stderr.write("\\npeak-rss-kib=" + peak + "\\n");
    });`);

const root = mkdtempSync(join(tmpdir(), "export-bench-"));
// As root, PostgreSQL runs as the postgres user, who must pass through to the data folders.
chmodSync(root, 0o711);

/** A data folder holding `rows` sign-ups, a second apart, a third of them without a phone. */
async function dataFolder(rows: number): Promise<string> {
  const dataDir = join(root, `data-${rows}`);
  const db = await openLocalDatabase({ dataDir });
  await db.transaction(async (tx) => {
    await tx.exec("set local role service_role");
    await tx.exec(`
      insert into public.early_access (email, phone, created_at)
      select 'person' || n || '@example.com',
             case when n % 3 = 0 then null else '+1 555 ' || lpad(n::text, 7, '0') end,
             timestamptz '2027-01-01 00:00:00+00' + n * interval '1 second'
        from generate_series(1, ${rows}) n`);
  });
  await db.close();
  return dataDir;
}

interface Measure {
  seconds: number;
  peakMiB: number;
  lines: number;
  bytes: number;
}

/** Runs the export to a file with these settings; its time, peak memory and output. */
async function exportOnce(settings: Record<string, string>): Promise<Measure> {
  const file = join(root, "export.csv");
  const started = performance.now();
  const { status, stderr } = await runNpmScript("sign-ups", ["export", "-o", file], {
    env: { ...process.env, ...LOCAL_ONLY, ...settings },
    nodeArgs: ["--import", REPORT_PEAK],
  });
  const seconds = (performance.now() - started) / 1000;
  if (status !== 0) throw new Error(`export failed: ${stderr}`);
  const kib = Number(/peak-rss-kib=(\d+)/.exec(stderr)?.[1]);
  const csv = readFileSync(file, "utf8");
  return { seconds, peakMiB: kib / 1024, lines: csv.split("\r\n").length - 2, bytes: statSync(file).size };
}

/** `npm run backend` on the folder, on a port of its own, until `work` is done. */
async function withLocalSupabase<T>(dataDir: string, work: (port: number) => Promise<T>): Promise<T> {
  const [port] = freePorts(1) as [number];
  const backend = await startLocalSupabaseProcess({
    ...LOCAL_ONLY,
    SUPABASE_DATA_DIR: dataDir,
    SUPABASE_API_PORT: String(port),
  });
  try {
    return await work(port);
  } finally {
    await backend.stop();
  }
}

const row = (rows: number, mode: string, { seconds, peakMiB, lines, bytes }: Measure) => [
  rows.toLocaleString("en"),
  mode,
  `${seconds.toFixed(1)} s`,
  `${Math.round(peakMiB)} MiB`,
  `${(bytes / 1024 / 1024).toFixed(1)} MiB${lines === rows ? "" : ` (${lines} rows!)`}`,
];

try {
  const header = ["sign-ups", "backend", "time", "peak memory", "CSV"];
  const measured: string[][] = [];
  for (const rows of SIZES) {
    const dataDir = await dataFolder(rows);
    // The command's settings name the folder the running backend holds, as the owner's `.env` does
    // beside `npm start`: a backend holding another folder would be refused.
    const running = await withLocalSupabase(dataDir, (port) =>
      exportOnce({ SUPABASE_DATA_DIR: dataDir, SUPABASE_API_PORT: String(port) }),
    );
    measured.push(row(rows, "running (`npm start`)", running));
    const [port] = freePorts(1) as [number];
    const opened = await exportOnce({ SUPABASE_DATA_DIR: dataDir, SUPABASE_API_PORT: String(port) });
    measured.push(row(rows, "none (opened by the command)", opened));
  }
  console.log("`npm run sign-ups -- export -o file`: time and the command's peak resident memory\n");
  console.log(table(header, measured));
  await writeResults("export", { header, rows: measured });
} finally {
  rmSync(root, { recursive: true, force: true });
}
