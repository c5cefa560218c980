// What the benches share: serving a build as `npm start` does, running `npm run backend`, a
// PostgreSQL server of their own with Supabase projects on it, medians, and markdown tables.
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  DEFAULT_MAJOR,
  startCluster,
  SUPERUSER,
  type PostgresMajor,
} from "../tools/local-supabase/database/cluster.ts";
import type { Database } from "../tools/local-supabase/database/database.ts";
import { connectPool } from "../tools/local-supabase/database/pool.ts";
import { setUpSupabaseProject } from "../tools/local-supabase/database/supabase-project.ts";
import { createStaticHost } from "../tools/static-host/static-host.ts";
import { npmScriptArgs } from "../tools/npm-script.ts";

export function median(values: number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function ms(n: number): string {
  return `${Math.round(n)} ms`;
}

/**
 * Writes a bench's figures to bench/results/<name>.json, with when and on what they were taken:
 * the record of its latest run, which the READMEs point to rather than copy.
 */
export async function writeResults(name: string, figures: object): Promise<void> {
  const file = new URL(`./results/${name}.json`, import.meta.url);
  await mkdir(new URL(".", file), { recursive: true });
  const machine = { cpus: cpus().length, loadAverage: loadavg().map((load) => Number(load.toFixed(2))) };
  await writeFile(
    file,
    `${JSON.stringify({ taken: new Date().toISOString(), machine, ...figures }, null, 2)}\n`,
  );
  console.log(`\nWritten to bench/results/${name}.json.`);
}

/** A figure against its target, as the benches print it: PASS or MISS, then the target. */
export const verdict = (met: boolean, target: string) => `${met ? "PASS" : "MISS"} (${target})`;

/** A markdown table, padded so that it also reads well in a terminal. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join("\n");
}

/** Every file under a folder, as paths relative to it. */
export async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length));
}

/** Serves a build as `npm start` does, on a free loopback port. */
export async function serve(root: string): Promise<{ origin: string; close: () => Promise<void> }> {
  const host = createStaticHost({ root });
  const server = createServer((req, res) => void host(req, res));
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The host compresses each file on its first request; fetching everything once keeps that
  // one-off cost out of the first run's server response times.
  for (const file of await filesUnder(root)) {
    await (await fetch(origin + file, { headers: { "Accept-Encoding": "br" } })).arrayBuffer();
  }
  return {
    origin,
    close: () => new Promise((closed) => server.close(() => closed())),
  };
}

export interface LocalSupabaseProcess {
  pid: number;
  /** Stops it (as Ctrl-C does) and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * `npm run backend` with `settings` over this process's environment, once it says where its API
 * answers. Its log (a line per request) is read and dropped from then on, so that it never
 * waits on a full pipe.
 */
export async function startLocalSupabaseProcess(
  settings: Record<string, string>,
): Promise<LocalSupabaseProcess> {
  const child = spawn(process.execPath, npmScriptArgs("backend"), {
    env: { ...process.env, ...settings },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((exit) => child.once("exit", () => exit()));
  await new Promise<void>((ready, failed) => {
    let output = "";
    const watch = (chunk: Buffer) => {
      output += chunk;
      if (!output.includes("API:")) return;
      child.stdout!.off("data", watch).resume();
      ready();
    };
    child.stdout!.on("data", watch);
    void exited.then(() => failed(new Error(`npm run backend exited before it answered:\n${output}`)));
  });
  return {
    pid: child.pid!,
    stop: async () => {
      child.kill("SIGINT");
      await exited;
    },
  };
}

/**
 * Waits until what the server was given to write is on disk and the machine is quiet, as after any
 * idle spell (a server checkpoints every 5 minutes): a checkpoint, on `superuser`'s connection, and
 * a pause, so that what is measured next does not wait on writes that came before it.
 */
export async function writtenOut(superuser: Database): Promise<void> {
  await superuser.exec("checkpoint");
  await sleep(2_000);
}

/** A PostgreSQL server of a bench's own, and what it closes. */
export interface BenchCluster {
  /** A pool of `poolSize` connections as `role` to `database`, closed with the server. */
  pool: (role: string, database: string, poolSize: number) => Database;
  /** A connection URL for `role` on `database`. */
  url: (role: string, database: string) => string;
  /** Closes every pool, stops the server and removes its folder. */
  close: () => Promise<void>;
}

/**
 * A server of `major` that keeps every commit on disk, as a hosted one does, in a temporary
 * folder, with each of `databases` set up as a Supabase project (the migrations applied).
 */
export async function startBenchCluster(
  databases: string[],
  major: PostgresMajor = DEFAULT_MAJOR,
): Promise<BenchCluster> {
  const folder = mkdtempSync(join(tmpdir(), "bench-cluster-"));
  // As root, the server runs as another user, who must reach the cluster inside.
  chmodSync(folder, 0o711);
  const cluster = await startCluster({
    folder: join(folder, "cluster"),
    durable: true,
    // A hosted project's memory rather than the local backend's small footprint: Supabase's
    // smallest computes give shared_buffers a quarter of their 1 GB.
    // Connections for bench:rules's four databases of 50 API connections each, and their owners.
    settings: { max_connections: "250", shared_buffers: "256MB" },
    major,
  });
  const pools: Database[] = [];
  const bench: BenchCluster = {
    pool: (role, database, poolSize) => {
      const pool = connectPool({ url: cluster.url(role, database), poolSize });
      pools.push(pool);
      return pool;
    },
    url: (role, database) => cluster.url(role, database),
    close: async () => {
      await Promise.all(pools.map((pool) => pool.close()));
      await cluster.stop();
      rmSync(folder, { recursive: true, force: true });
    },
  };
  try {
    const admin = bench.pool(SUPERUSER, "postgres", 1);
    for (const name of databases) await admin.exec(`create database ${name}`);
    for (const name of databases) await setUpSupabaseProject(cluster, name);
  } catch (error) {
    await bench.close();
    throw error;
  }
  return bench;
}

/**
 * A trigger before the row that only marks its transaction for the read-back (dropping it instead
 * would fail every insert on row level security), and none after the statement: the rules' steps
 * gone, the row still written and read back as a sign-up is.
 */
export const MARK_ONLY = `
  create or replace function private.before_sign_up() returns trigger
  language plpgsql security definer set search_path = '' as $$
  begin
    perform set_config('early_access.admitted_sign_up', new.id::text, true);
    return new;
  end;
  $$;
  drop trigger early_access_after_insert on public.early_access;`;

/**
 * What makes `database` one "without the rules", run as its owner: MARK_ONLY, and no pre-request
 * gate (PostgREST's setting, emptied for this database alone; an empty name is none, as PostgREST
 * reads it).
 */
export const withoutRules = (database: string) =>
  `alter role authenticator in database ${database} set pgrst.db_pre_request = ''; ${MARK_ONLY}`;

/** Whatever a .env says: the local Supabase on its own server, the local keys. */
export const LOCAL_ONLY = {
  PUBLIC_SUPABASE_URL: "",
  SUPABASE_SECRET_KEY: "",
  SUPABASE_DB_URL: "",
  SUPABASE_SEED_FILE: "",
};
