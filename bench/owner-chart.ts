// `npm run bench:chart`: how long `npm run sign-ups -- count` (the totals and the chart by day)
// and `count --hours` take with 1,000,000 sign-ups on the local Supabase, counted by the database's
// views (supabase/schemas/40_sign_ups_by_hour.sql). Two lists of that size: one gathered over a
// year, and one whose every sign-up came in the chart's 30 days (a launch), the most the views can
// be asked to count. 1% of each is marked. With the backend running (the command is then only a
// client), and with none (the command opens the data folder, its PostgreSQL server included).
// Target: under 2 s with the backend running. Beside the command's time (a Node process started,
// its modules loaded), the time of its two reads alone, over HTTP from this process: what the views
// cost. Data folders and ports of its own; prints figures and writes them to its file in
// bench/results/, never fails on them.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@supabase/supabase-js";
import { openLocalDatabase } from "../tools/local-supabase/database/local-database.ts";
import { LOCAL_SECRET_KEY } from "../config/local-supabase.ts";
import { signUpsClient } from "../tools/sign-ups/client.ts";
import { chartWindow } from "../tools/sign-ups/growth.ts";
import { runNpmScript } from "../tools/npm-script.ts";
import { freePorts } from "../tools/processes.ts";
import { LOCAL_ONLY, median, startLocalSupabaseProcess, table, writeResults } from "./support.ts";

const SIGN_UPS = 1_000_000;
const RUNS = 7;
const TARGET_SECONDS = 2;

const LISTS = [
  { name: "gathered over a year", spread: "365 days" },
  { name: "all in the last 30 days", spread: "30 days" },
];

const root = mkdtempSync(join(tmpdir(), "chart-bench-"));
// As root, PostgreSQL runs as the postgres user, who must pass through to the data folders.
chmodSync(root, 0o711);

/**
 * A data folder holding the sign-ups, evenly spread over `spread` up to now, a third without a
 * phone, 1% marked; analysed, as autovacuum analyses a table that grew.
 */
async function dataFolder(spread: string): Promise<string> {
  const dataDir = join(root, spread.replace(" ", "-"));
  const db = await openLocalDatabase({
    dataDir,
    seed: `
      insert into public.early_access (email, phone, created_at)
      select 'person' || n || '@example.com',
             case when n % 3 = 0 then null else '+1 555 ' || lpad(n::text, 7, '0') end,
             now() - interval '${spread}' * n / ${SIGN_UPS}
        from generate_series(1, ${SIGN_UPS}) n;
      insert into public.early_access_marks (sign_up_id, source, reason)
      select id, '0123456789ab', 'bench' from public.early_access where email like 'person%00@example.com';
      analyze public.early_access, public.early_access_marks;`,
  });
  await db.close();
  return dataDir;
}

/** The command's seconds, `RUNS` times. */
async function time(args: string[], settings: Record<string, string>, runs = RUNS): Promise<number[]> {
  const seconds: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const { status, stdout, stderr } = await runNpmScript("sign-ups", args, {
      env: { ...process.env, ...LOCAL_ONLY, TZ: "UTC", ...settings },
    });
    seconds.push((performance.now() - started) / 1000);
    if (status !== 0 || !stdout.startsWith(`${SIGN_UPS.toLocaleString("en-US")} sign-ups`))
      throw new Error(`count failed: ${stderr}${stdout.slice(0, 200)}`);
  }
  return seconds;
}

/** The two reads `count` makes (the totals, then the hours of its window), `RUNS` times. */
async function timeReads(port: number): Promise<number[]> {
  const url = `http://127.0.0.1:${port}`;
  const client = createClient(url, LOCAL_SECRET_KEY, { auth: { persistSession: false } });
  const signUps = signUpsClient(client, { url, keySource: "the local secret key" });
  const seconds: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const totals = await signUps.totals();
    await signUps.hours(chartWindow(new Date(), "UTC", new Date(totals.first_at!)).since);
    seconds.push((performance.now() - started) / 1000);
  }
  return seconds;
}

const figure = (seconds: number[]) => {
  const sorted = seconds.toSorted((a, b) => a - b);
  return `${median(seconds).toFixed(2)} s (${sorted[0]!.toFixed(2)}–${sorted.at(-1)!.toFixed(2)})`;
};

try {
  const rows: string[][] = [];
  for (const { name, spread } of LISTS) {
    const dataDir = await dataFolder(spread);
    const [port] = freePorts(1) as [number];
    const settings = { SUPABASE_DATA_DIR: dataDir, SUPABASE_API_PORT: String(port) };
    const backend = await startLocalSupabaseProcess({ ...LOCAL_ONLY, ...settings });
    try {
      rows.push([name, "its two reads alone", "running", figure(await timeReads(port)), ""]);
      for (const args of [["count"], ["count", "--hours"]]) {
        const seconds = await time(args, settings);
        const verdict = median(seconds) < TARGET_SECONDS ? "PASS" : "MISS";
        rows.push([
          name,
          `\`${args.join(" ")}\``,
          "running",
          figure(seconds),
          `${verdict} (< ${TARGET_SECONDS} s)`,
        ]);
      }
    } finally {
      await backend.stop();
    }
    const [own] = freePorts(1) as [number];
    const opened = await time(["count"], { SUPABASE_DATA_DIR: dataDir, SUPABASE_API_PORT: String(own) }, 3);
    rows.push([name, "`count`", "none (opened by the command)", figure(opened), ""]);
    rmSync(dataDir, { recursive: true, force: true });
  }
  console.log(
    `\`npm run sign-ups -- count\` with ${SIGN_UPS.toLocaleString("en-US")} sign-ups: median of ${RUNS} (min–max)\n`,
  );
  const header = ["list", "command", "backend", "time", "target"];
  console.log(table(header, rows));
  await writeResults("owner-chart", { signUps: SIGN_UPS, runs: RUNS, header, rows });
} finally {
  rmSync(root, { recursive: true, force: true });
}
