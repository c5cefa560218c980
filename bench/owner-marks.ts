// `npm run bench:marks`: how long the owner's `count` and `list --marked` take at 100,000
// sign-ups, now that they mark disposable, mistyped and repeated addresses as they read the list
// (tools/sign-ups/marks.ts, supabase/schemas/50_addresses.sql). The list is made to be hard on
// them: a long tail of 10,000 company domains (every domain is checked against the lists), 1,000
// sign-ups at 50 disposable domains, 500 at mistyped ones, 1,500 dotted and tagged Gmail
// variants of 100 mailboxes, and 1% marked past a pace. With the backend running (the command
// is then only a client). Target: under 2 s. Data folder and port of its own; prints figures
// and writes them to its file in bench/results/, never fails on them.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@supabase/supabase-js";
import mailchecker from "mailchecker";
import { LOCAL_SECRET_KEY } from "../config/local-supabase.ts";
import { signUpsClient } from "../tools/sign-ups/client.ts";
import { openLocalDatabase } from "../tools/local-supabase/database/local-database.ts";
import { domainMark } from "../tools/sign-ups/marks.ts";
import { runNpmScript } from "../tools/npm-script.ts";
import { freePorts } from "../tools/processes.ts";
import { LOCAL_ONLY, median, startLocalSupabaseProcess, table, writeResults } from "./support.ts";

const SIGN_UPS = 100_000;
const RUNS = 5;
const TARGET_SECONDS = 2;

const DISPOSABLE = [...mailchecker.blacklist()]
  .filter((domain) => /^[a-z0-9-]+\.com$/.test(domain) && domainMark(domain)?.reason === "disposable")
  .slice(0, 50);
const MISTYPED = ["gmial.com", "hotmial.com", "yahooo.com", "gmail.con", "outlok.com"];
const PROVIDERS = [
  "gmail.com",
  "gmail.com",
  "gmail.com",
  "yahoo.com",
  "hotmail.com",
  "outlook.com",
  "icloud.com",
];

const ODD = 1_000 + 500 + 1_500;
const ORDINARY = SIGN_UPS - ODD;

const sqlList = (items: string[]) => `array[${items.map((item) => `'${item}'`).join(", ")}]`;

const root = mkdtempSync(join(tmpdir(), "marks-bench-"));
// As root, PostgreSQL runs as the postgres user, who must pass through to the data folders.
chmodSync(root, 0o711);

/** The list described above, over the last 30 days, the repeats the latest; analysed. */
async function dataFolder(): Promise<string> {
  const dataDir = join(root, "data");
  const db = await openLocalDatabase({
    dataDir,
    seed: `
      insert into public.early_access (email, created_at)
      select 'user' || n || '@' || case when n % 10 < 7 then (${sqlList(PROVIDERS)})[n % 10 + 1]
                                        else 'company' || (n % 10000) || '.com' end,
             now() - interval '30 days' * (${SIGN_UPS} - n) / ${SIGN_UPS} - interval '1 day'
        from generate_series(1, ${ORDINARY}) n;
      insert into public.early_access (email, created_at)
      select 'throwaway' || n || '@' || (${sqlList(DISPOSABLE)})[n % ${DISPOSABLE.length} + 1], now() - interval '1 hour' * n / 1000
        from generate_series(1, 1000) n;
      insert into public.early_access (email, created_at)
      select 'person' || n || '@' || (${sqlList(MISTYPED)})[n % ${MISTYPED.length} + 1], now() - interval '1 hour' * n / 500
        from generate_series(1, 500) n;
      -- user10@gmail.com, user20@gmail.com…: their dotted, tagged variants, later.
      insert into public.early_access (email, created_at)
      select 'us.er' || (n % 100 + 1) * 10 || '+' || n || '@gmail.com', now() - interval '1 minute' * n / 1500
        from generate_series(1, 1500) n;
      insert into public.early_access_marks (sign_up_id, source, reason)
      select id, '0123456789ab', 'bench' from public.early_access where email like '%00@%';
      analyze public.early_access, public.early_access_marks;`,
  });
  await db.close();
  return dataDir;
}

/** The command's seconds, `RUNS` times, and its last output. */
async function time(
  args: string[],
  settings: Record<string, string>,
): Promise<{ seconds: number[]; out: string }> {
  const seconds: number[] = [];
  let out = "";
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    const { status, stdout, stderr } = await runNpmScript("sign-ups", args, {
      env: { ...process.env, ...LOCAL_ONLY, TZ: "UTC", ...settings },
    });
    seconds.push((performance.now() - started) / 1000);
    if (status !== 0) throw new Error(`${args.join(" ")} failed: ${stderr}`);
    out = stdout + stderr;
  }
  return { seconds, out };
}

/** Each read the two verbs make, alone, from this process: what the views cost. */
async function timeReads(port: number): Promise<string[][]> {
  const url = `http://127.0.0.1:${port}`;
  const client = createClient(url, LOCAL_SECRET_KEY, { auth: { persistSession: false } });
  const signUps = signUpsClient(client, { url, keySource: "the local secret key" });
  const reads: Array<[string, () => Promise<unknown>]> = [
    ["the totals", () => signUps.totals()],
    ["every domain's counts, in one row", () => signUps.domainCounts()],
    ["every domain's first, latest and addresses, in one row", () => signUps.domains()],
    ["the repeats, grouped by mailbox", () => signUps.mailboxes()],
    ["the sources past a pace", () => signUps.sources()],
  ];
  const rows: string[][] = [];
  for (const [name, read] of reads) {
    const seconds: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const started = performance.now();
      await read();
      seconds.push((performance.now() - started) / 1000);
    }
    rows.push([`${name}, read alone`, figure(seconds), ""]);
  }
  return rows;
}

const figure = (seconds: number[]) => {
  const sorted = seconds.toSorted((a, b) => a - b);
  return `${median(seconds).toFixed(2)} s (${sorted[0]!.toFixed(2)}–${sorted.at(-1)!.toFixed(2)})`;
};

try {
  const dataDir = await dataFolder();
  const [port] = freePorts(1) as [number];
  const settings = { SUPABASE_DATA_DIR: dataDir, SUPABASE_API_PORT: String(port) };
  const backend = await startLocalSupabaseProcess({ ...LOCAL_ONLY, ...settings });
  const rows: string[][] = [];
  const outputs: string[] = [];
  try {
    rows.push(...(await timeReads(port)));
    for (const args of [["count"], ["list", "--marked"]]) {
      const { seconds, out } = await time(args, settings);
      const verdict = median(seconds) < TARGET_SECONDS ? "PASS" : "MISS";
      rows.push([`\`${args.join(" ")}\``, figure(seconds), `${verdict} (< ${TARGET_SECONDS} s)`]);
      outputs.push(
        out
          .split("\n")
          .filter((line) => /marked/.test(line))
          .join("\n"),
      );
    }
  } finally {
    await backend.stop();
  }
  console.log(
    `The owner's marks with ${SIGN_UPS.toLocaleString("en-US")} sign-ups, backend running: median of ${RUNS} (min–max)\n`,
  );
  const header = ["command", "time", "target"];
  console.log(table(header, rows));
  await writeResults("owner-marks", { signUps: SIGN_UPS, runs: RUNS, header, rows });
  console.log(`\nWhat they said:\n${outputs.join("\n")}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
