// @ts-check
import { existsSync } from "node:fs";
import { defineConfig } from "vitest/config";
import type { PostgresMajor } from "./tools/local-supabase/database/cluster.ts";
import { LongestFirst } from "./tests/support/longest-first.ts";
import { useTestEnvironment } from "./tests/test-environment.ts";

// Ports, build folder and database of the tests' own, handed down to every worker and every
// process a test starts (tests/test-environment.ts).
useTestEnvironment();

/**
 * The run's PostgreSQL server of one major, set up as a hosted Supabase project is
 * (tests/support/). Hosted Supabase runs 15 and 17: what the tests prove about the database, they
 * prove on 17, and again on 15 wherever the major can change the answer (ON_POSTGRES_15), a project
 * per major (`database` on 17, `database-pg15` on 15, and so on).
 */
const postgres = (major: PostgresMajor) => ({
  environment: "node",
  globalSetup: ["tests/support/postgres.setup.ts"],
  provide: { postgresMajor: major },
  testTimeout: 90_000,
  hookTimeout: 180_000,
});
/** The site built once into the run's own folder. */
const build = { environment: "node", globalSetup: ["tests/support/build.setup.ts"] };

/**
 * On PostgreSQL 15, only what can differ between majors: what the server itself decides (its
 * catalog, grants, locks, plans, error messages, regular expressions and Unicode tables), every
 * function of the rules once, and their answers through the local Supabase. Not what runs in Node
 * alone, nor what repeats a function 17 has already run at other inputs. Each file, and why:
 */
const ON_POSTGRES_15 = {
  database: [
    "access", // who may read and write what: grants and row level security
    "addresses", // the checks on an address and a phone: the server's regular expressions and Unicode tables
    "concurrency", // the unique check and ON CONFLICT between concurrent transactions: the server's locks
    "deploy", // `supabase db push` with the real CLI, against that major
    "attempts", // which failures are charged and which the rules never see: sequences, casts, a burst of shapes
    "ceilings", // floods over concurrent connections held to their ceilings, and the failures' sketch resized
    "plans", // every statement's estimate below jit_above_cost, from that major's planner
    "request-gate", // the pre-request gate as PostgREST runs it: role settings, and what 15 plans before a privilege check
    "schema", // the migrations build what the schema files declare, read from that major's catalog
    "security-advisor", // the Advisor's lints and the API roles' privileges, from that major's catalog
    "sign-up-limits", // every function of the rules once (inet, jsonb, hashing, row locks, plans), through the endpoint
    "strangers", // none of a thousand fresh visitors refused beside a flood: the promise itself, on each major
    "upgrade", // the newest rules' migration over a project the old ones ran, on that major's catalog
    // Not: client-address (the gateway takes the socket's address, in Node); crowds (the same
    // functions' counting over 15,000 sign-ups, one at a time, as strangers.test.ts runs them);
    // migration-names (file names, no server); sign-up-buckets (the same functions' arithmetic at
    // many instants).
  ],
  "local-supabase": [
    "database", // Supabase's roles, a request's transaction and its settings
    "errors", // Postgres's own messages, details and hints, which change between majors
    "owner-views", // the views the owner's command reads: counted, grouped and matched by the server
    "read-back", // the read-back's policy between concurrent requests, and its plan: an index lookup
    "reading", // order, limit, counts and filters on tables and views, run as SQL
    "request-gate", // the public key's requests through the gate: refused before a regular expression is compiled
    "sign-up", // the site's call, and the rules' answers to it through the endpoint
    // Not: gateway and http-edges (keys, CORS, routes, body limits, bad input: refused in Node
    // before any SQL); process, data-folder, persistence, server-log (`npm run backend`'s, which
    // runs 17 only).
  ],
  "sign-ups": [
    "marks", // the same mailbox found by the server's view (regular expressions), beside the pure rules
    // Not: owner-command (the command is a client of the endpoint: its reads are the views above,
    // and its formatting, process and data folder are the same on any major); the pure parts.
  ],
};
/** The files a folder's list names; a name that matches no file stops the run, naming it. */
const onPostgres15 = (folder: keyof typeof ON_POSTGRES_15) =>
  ON_POSTGRES_15[folder].map((name) => {
    const file = `tests/${folder}/${name}.test.ts`;
    if (!existsSync(new URL(file, import.meta.url)))
      throw new Error(`vitest.config.ts, ON_POSTGRES_15.${folder}: "${name}" names no file (${file})`);
    return file;
  });

// One project per subject, named after its folder in tests/ (tests/README.md).
export default defineConfig({
  test: {
    // Two files side by side, one per core of a 2-core machine: most of a database test's time is
    // spent waiting for PostgreSQL, a process or a build (Vitest's default, one fewer than the
    // cores, runs one file at a time there). `npm test` runs the browser tests beside them, with
    // two browsers of their own: four at once already keep both cores busy. VITEST_MAX_WORKERS
    // overrides it.
    maxWorkers: Number(process.env.VITEST_MAX_WORKERS) || 2,
    // Limits for a test that hangs, not for a slow one: a machine shared with other work (load
    // average 20 on 2 cores, seen) makes a start of PostgreSQL or of a process take many times
    // its usual seconds. Vitest's defaults, 5 and 10 s, failed there tests that pass alone.
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // The longest files first, whatever their project (tests/support/longest-first.ts).
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        // The site's logic, and its islands in a simulated DOM: the files that need one ask for
        // jsdom (`// @vitest-environment jsdom`), which costs a second of CPU a file to set up.
        test: { name: "site", include: ["tests/site/*.test.{ts,tsx}"], environment: "node" },
        esbuild: { jsx: "automatic" },
      },
      // What the build ships, and an editor's change built anew.
      { test: { name: "site-build", include: ["tests/site/build/**/*.test.ts"], ...build } },
      // The database's rules, on a real server with real concurrent connections.
      { test: { name: "database", include: ["tests/database/**/*.test.ts"], ...postgres(17) } },
      { test: { name: "database-pg15", include: onPostgres15("database"), ...postgres(15) } },
      // The local Supabase: its REST answers, its process and its data folder.
      { test: { name: "local-supabase", include: ["tests/local-supabase/**/*.test.ts"], ...postgres(17) } },
      { test: { name: "local-supabase-pg15", include: onPostgres15("local-supabase"), ...postgres(15) } },
      // The owner's command, as a process and its pure parts.
      { test: { name: "sign-ups", include: ["tests/sign-ups/**/*.test.ts"], ...postgres(17) } },
      { test: { name: "sign-ups-pg15", include: onPostgres15("sign-ups"), ...postgres(15) } },
      // The static host `npm start` uses, and deploy/nginx.conf in a real nginx.
      { test: { name: "hosting", include: ["tests/hosting/**/*.test.ts"], ...build } },
      // The settings the build and every command read.
      { test: { name: "config", include: ["tests/config/**/*.test.ts"], environment: "node" } },
      // A developer's running `npm start` is left alone by a test run.
      { test: { name: "isolation", include: ["tests/isolation/**/*.test.ts"], environment: "node" } },
      // Every path the documents and comments name is there.
      { test: { name: "docs", include: ["tests/docs/**/*.test.ts"], environment: "node" } },
      // What `npm ci` installs: every platform's native binaries are in the lock.
      { test: { name: "install", include: ["tests/install/**/*.test.ts"], environment: "node" } },
      // `npm run deploy`: its steps, the hosts' real CLIs against stand-ins of their APIs, its checks.
      {
        test: {
          name: "deploy",
          include: ["tests/deploy/**/*.test.ts"],
          ...postgres(17),
          globalSetup: [...postgres(17).globalSetup, ...build.globalSetup],
        },
      },
      // The deploy's project step on 15 too: the pinned CLI's push and dry run against that major.
      { test: { name: "deploy-pg15", include: ["tests/deploy/project.test.ts"], ...postgres(15) } },
      // GitHub's workflows: actionlint, and their steps run here (the watch against a local Supabase).
      { test: { name: "workflows", include: ["tests/workflows/**/*.test.ts"], ...postgres(17) } },
    ],
  },
});
