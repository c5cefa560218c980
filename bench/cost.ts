// `npm run bench:cost [-- --clients N]`: what the sign-up rules cost a small project, on a server
// of each major hosted Supabase runs, 15 then 17, each figure beside the same thing without the
// rules: disk, an API connection's memory, CPU per sign-up and per refusal, a new connection's
// first sign-up, the sequences a stored sign-up touches. What each figure is, how it is taken
// and its target: bench/README.md. Prints the figures with their targets and writes them to
// bench/results/cost.json; it never fails on them.
import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import pg from "pg";
import { POSTGRES_MAJORS, SUPERUSER } from "../tools/local-supabase/database/cluster.ts";
import { OWNER, prepareSupabaseProject } from "../tools/local-supabase/database/supabase-project.ts";
import { insertStatement, preRequestStatement } from "../tools/local-supabase/statements.ts";
import { startBenchCluster, table, verdict, writeResults, type BenchCluster } from "./support.ts";

const { values: options } = parseArgs({ options: { clients: { type: "string", default: "3000" } } });
const CLIENTS = Number(options.clients);

/** What the migrations may add to a new project's database. */
const MAX_ADDED_MB = 8;
/** What an API connection may keep beyond a plain table's, after sign-ups from CLIENTS clients. */
const MAX_MEMORY_OVER_PLAIN_MB = 3;
/** What the rules may add to a sign-up's CPU, beyond a plain table's. */
const MAX_CPU_OVER_PLAIN_MS = 0.5;

const SCHEMAS = new URL("../supabase/schemas/", import.meta.url);
const MB = 1024 * 1024;

/** A table with the list's columns and nothing else: what the rules are measured beside. */
const PLAIN_TABLE = `
  create table public.early_access (
    id uuid primary key default gen_random_uuid(),
    email text not null unique,
    phone text,
    created_at timestamptz not null default now());
  grant insert, select on public.early_access to anon;`;

/** PostgREST's settings for a visitor's POST, then its role, as the local Supabase sends them. */
const SETTINGS = `select set_config('request.method', 'POST', true), set_config('request.path', '/early_access', true),
  set_config('request.headers', $1, true), set_config('role', 'anon', true)`;
const GATE = preRequestStatement("request_gate.check_request");
const INSERT = insertStatement(
  "early_access",
  { json: "", isArray: true, columns: [{ name: "email", type: "text" }] },
  [{ column: "email", cast: null }],
).text;

/** Sequences this connection holds a lock on: those its transaction touched. */
const SEQUENCES_TOUCHED = `select count(*)::integer as n from pg_catalog.pg_locks l join pg_catalog.pg_class c on c.oid = l.relation
  where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relkind = 'S'`;

const size = async (bench: BenchCluster, database: string) =>
  Number(
    (
      await bench
        .pool(SUPERUSER, database, 1)
        .query<{ bytes: string }>("select pg_database_size(current_database()) as bytes")
    ).rows[0]!.bytes,
  );

/** A new database set up as a project, with `then` run in it as the owner. */
async function project(bench: BenchCluster, database: string, then: (owner: pg.Client) => Promise<void>) {
  await bench.pool(SUPERUSER, "postgres", 1).exec(`create database ${database}`);
  await prepareSupabaseProject(bench, database);
  const owner = new pg.Client(bench.url(OWNER, database));
  await owner.connect();
  await then(owner).finally(() => owner.end());
}

/** The server process's CPU time, in seconds, from /proc (user and system, in clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * How many sign-ups each way signs in its turn: the two take turns, so that the machine's drift
 * weighs on both alike.
 */
const TURN = 100;

/**
 * One superuser's connection that signs visitors up as PostgREST does, each in its own
 * transaction: it counts its server process's CPU time and the most sequences a sign-up touched,
 * and reads what the connection keeps.
 */
async function signer(bench: BenchCluster, database: string, withGate: boolean) {
  const session = new pg.Client(bench.url(SUPERUSER, database));
  await session.connect();
  const pid = (await session.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid;
  let cpu = 0;
  let signedUp = 0;
  let sequences = 0;
  /**
   * A visitor's sign-up, from its own client unless told; before its commit, how many sequences it
   * touched, or -1 if the rules refused it (429, rolled back).
   */
  const signUp = async (
    index: number,
    client = `${11 + (index % 200)}.${(index >> 8) & 255}.${index & 255}.${1 + (index % 250)}`,
  ) => {
    await session.query("begin");
    await session.query({
      name: "settings",
      text: SETTINGS,
      values: [JSON.stringify({ "cf-connecting-ip": client })],
    });
    if (withGate) await session.query({ name: "gate", text: GATE });
    const email = JSON.stringify([{ email: `cost-${index}-${client}@example.com` }]);
    try {
      await session.query({ name: "insert", text: INSERT, values: [email] });
    } catch (error) {
      await session.query("rollback");
      if (!String((error as Error).message).includes("PT429")) throw error;
      return -1;
    }
    const { rows } = await session.query<{ n: number }>(SEQUENCES_TOUCHED);
    await session.query("commit");
    return rows[0]!.n;
  };
  /** Its server process's CPU time per sign-up so far. */
  const cpuPerSignUpMs = () => (cpu * 1000) / signedUp;
  return {
    /** Signs up the visitors `from` to `to` (excluded). */
    async signUp(from: number, to: number) {
      const started = cpuSeconds(pid);
      for (let index = from; index < to; index++) sequences = Math.max(sequences, await signUp(index));
      cpu += cpuSeconds(pid) - started;
      signedUp += to - from;
    },
    /** The visitors `from` to `to` (excluded), all from `client`: CPU per request, and how many were refused. */
    async from(client: string, from: number, to: number) {
      const started = cpuSeconds(pid);
      let refused = 0;
      for (let index = from; index < to; index++) if ((await signUp(index, client)) < 0) refused++;
      return { cpuMs: ((cpuSeconds(pid) - started) * 1000) / (to - from), refused };
    },
    cpuPerSignUpMs,
    async figures() {
      const { rows } = await session.query<{ total: string; cache: string }>(
        `select sum(total_bytes) as total, sum(total_bytes) filter (where name = 'CacheMemoryContext') as cache
           from pg_catalog.pg_backend_memory_contexts`,
      );
      return {
        memoryMb: Number(rows[0]!.total) / MB,
        cacheMemoryContextMb: Number(rows[0]!.cache) / MB,
        cpuPerSignUpMs: cpuPerSignUpMs(),
        sequencesTouched: sequences,
      };
    },
    end: () => session.end(),
  };
}

/** How many new connections sign up once each way, for the mean of their first sign-ups. */
const NEW_CONNECTIONS = 20;

/** Each way, the mean CPU of a new connection's first sign-up (visitors after the CLIENTS). */
async function firstSignUps(bench: BenchCluster) {
  const ways = [
    { database: "with_rules", withGate: true, cpuMs: 0 },
    { database: "plain", withGate: false, cpuMs: 0 },
  ];
  for (let index = CLIENTS; index < CLIENTS + NEW_CONNECTIONS; index++) {
    for (const way of ways) {
      const connection = await signer(bench, way.database, way.withGate);
      await connection.signUp(index, index + 1);
      way.cpuMs += connection.cpuPerSignUpMs() / NEW_CONNECTIONS;
      await connection.end();
    }
  }
  return { rules: ways[0]!.cpuMs, plain: ways[1]!.cpuMs };
}

/** How many refusals, and sign-ups beside them, each turn, and how many turns. */
const REFUSALS = { turn: 100, turns: 10 };

/**
 * A refusal's CPU beside a sign-up's, on one connection of the rules: a client's hourly ceiling
 * filled first, as a flood fills it (its sign-ups until the first refusal), then its refusals and
 * new clients' sign-ups (the visitors after the first sign-ups'), taking turns.
 */
async function refusals(bench: BenchCluster) {
  const connection = await signer(bench, "with_rules", true);
  const flooding = "203.0.113.7";
  try {
    let index = 0;
    while ((await connection.from(flooding, index, index + 1)).refused === 0) index++;
    let refusalMs = 0;
    // Its bucket drips one more sign-up through every so often: those are stored, and counted here.
    let stored = 0;
    for (let turn = 0; turn < REFUSALS.turns; turn++) {
      const first = index + 1 + turn * REFUSALS.turn;
      const { cpuMs, refused } = await connection.from(flooding, first, first + REFUSALS.turn);
      refusalMs += cpuMs / REFUSALS.turns;
      stored += REFUSALS.turn - refused;
      const visitors = CLIENTS + NEW_CONNECTIONS + turn * REFUSALS.turn;
      await connection.signUp(visitors, visitors + REFUSALS.turn);
    }
    return { refusalMs, signUpMs: connection.cpuPerSignUpMs(), storedOfTheRefused: stored };
  } finally {
    await connection.end();
  }
}

/** CLIENTS sign-ups each way, taking turns, and what each connection keeps and spent. */
async function signUps(bench: BenchCluster) {
  const withRules = await signer(bench, "with_rules", true);
  const plain = await signer(bench, "plain", false);
  try {
    for (let from = 0; from < CLIENTS; from += TURN) {
      const ways = (from / TURN) % 2 === 0 ? [withRules, plain] : [plain, withRules];
      for (const way of ways) await way.signUp(from, Math.min(from + TURN, CLIENTS));
    }
    return { rules: await withRules.figures(), plain: await plain.figures() };
  } finally {
    await Promise.all([withRules.end(), plain.end()]);
  }
}

const results: Record<string, object> = {};
const rows: string[][] = [];
for (const major of POSTGRES_MAJORS.toSorted()) {
  const bench = await startBenchCluster(["with_rules"], major);
  try {
    await project(bench, "plain", (owner) => owner.query(PLAIN_TABLE).then(() => undefined));
    await project(bench, "empty", async () => {});
    await project(bench, "from_schemas", async (owner) => {
      // As the Supabase CLI reads them: every file, in file-name order.
      for (const file of readdirSync(SCHEMAS)
        .filter((name) => name.endsWith(".sql"))
        .sort()) {
        await owner.query(readFileSync(new URL(file, SCHEMAS), "utf8"));
      }
    });
    const [empty, migrated, fromSchemas] = await Promise.all(
      ["empty", "with_rules", "from_schemas"].map((database) => size(bench, database)),
    );
    const { rules, plain } = await signUps(bench);
    const firstSignUpCpuMs = await firstSignUps(bench);
    const refusalCpuMs = await refusals(bench);
    const figures = {
      addedByMigrationsMb: (migrated - empty) / MB,
      addedBySchemasAloneMb: (fromSchemas - empty) / MB,
      rules,
      plain,
      memoryOverPlainMb: rules.memoryMb - plain.memoryMb,
      firstSignUpCpuMs,
      refusalCpuMs,
    };
    results[`PostgreSQL ${major}`] = figures;
    const mb = (n: number) => `${n.toFixed(1)} MB`;
    rows.push(
      [
        `${major}: the migrations add to a new database`,
        mb(figures.addedByMigrationsMb),
        "",
        verdict(figures.addedByMigrationsMb <= MAX_ADDED_MB, `≤ ${MAX_ADDED_MB} MB`),
      ],
      [`${major}: the schema files alone add`, mb(figures.addedBySchemasAloneMb), "", ""],
      [
        `${major}: an API connection's memory after ${CLIENTS.toLocaleString("en")} clients`,
        mb(rules.memoryMb),
        mb(plain.memoryMb),
        verdict(
          figures.memoryOverPlainMb <= MAX_MEMORY_OVER_PLAIN_MB,
          `≤ ${MAX_MEMORY_OVER_PLAIN_MB} MB more`,
        ),
      ],
      [
        `${major}: of which its catalog cache`,
        mb(rules.cacheMemoryContextMb),
        mb(plain.cacheMemoryContextMb),
        "",
      ],
      [
        `${major}: its server process's CPU per sign-up`,
        `${rules.cpuPerSignUpMs.toFixed(2)} ms`,
        `${plain.cpuPerSignUpMs.toFixed(2)} ms`,
        verdict(
          rules.cpuPerSignUpMs - plain.cpuPerSignUpMs <= MAX_CPU_OVER_PLAIN_MS,
          `≤ ${MAX_CPU_OVER_PLAIN_MS} ms more`,
        ),
      ],
      [
        `${major}: a refusal's CPU (a client past its ceiling)`,
        `${refusalCpuMs.refusalMs.toFixed(2)} ms`,
        "",
        verdict(
          refusalCpuMs.refusalMs <= refusalCpuMs.signUpMs,
          `≤ a sign-up's beside it, ${refusalCpuMs.signUpMs.toFixed(2)} ms`,
        ),
      ],
      [
        `${major}: a new connection's first sign-up, its CPU`,
        `${firstSignUpCpuMs.rules.toFixed(1)} ms`,
        `${firstSignUpCpuMs.plain.toFixed(1)} ms`,
        "",
      ],
      [
        `${major}: sequences a stored sign-up touches`,
        String(rules.sequencesTouched),
        String(plain.sequencesTouched),
        verdict(rules.sequencesTouched === 0, "0"),
      ],
    );
  } finally {
    await bench.close();
  }
}
console.log(`\n${table(["PostgreSQL", "with the rules", "a plain table", "target"], rows)}`);
await writeResults("cost", {
  clients: CLIENTS,
  targets: {
    addedByMigrationsMb: MAX_ADDED_MB,
    memoryOverPlainMb: MAX_MEMORY_OVER_PLAIN_MB,
    cpuOverPlainMs: MAX_CPU_OVER_PLAIN_MS,
  },
  ...results,
});
