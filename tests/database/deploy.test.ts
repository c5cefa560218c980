// The deploy as an owner runs it, with the Supabase CLI the project pins (`npm run supabase`,
// tools/supabase-cli.ts): `supabase db push --remote=<url>` from a copy of supabase/ into a fresh
// database on a server of its own, set up as a new hosted project is (Supabase's roles and
// privileges, no migration yet): roles and their settings belong to the whole server, and the
// run's server has the template's already. Then PostgREST's pre-request function is set, a
// visitor's sign-up works through the local Supabase over that database, and the owner's own next
// migration, made with `supabase migration new`, pushes after ours. On each major.
//
// The CLI runs without Docker: `--remote=<url>` reaches the database directly (the README's
// `--remote` reaches the linked project the same way, through Supabase's API first). Its home
// (where it keeps its login, telemetry and traces) is a temporary folder, and its telemetry is
// off. A new pin whose CLI calls these words deprecated fails here, so the commands move with it.
import { randomUUID } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LOCAL_SECRET_KEY } from "../../config/local-supabase.ts";
import { SUPERUSER, type PostgresCluster } from "../../tools/local-supabase/database/cluster.ts";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { connectPool } from "../../tools/local-supabase/database/pool.ts";
import {
  LOGIN_ROLE,
  OWNER,
  prepareSupabaseProject,
} from "../../tools/local-supabase/database/supabase-project.ts";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { runSupabase, SUPABASE_CLI } from "../../tools/supabase-cli.ts";
import { withoutTestEnvironment } from "../test-environment.ts";
import { DUPLICATE_MESSAGE, rest, signUpOverHttp, uniqueEmail } from "../support/database.ts";
import { startPostgresServer } from "../support/postgres-server.ts";

const major = inject("postgresMajor");
const database = `deploy_${randomUUID().replaceAll("-", "")}`;
const folder = mkdtempSync(join(tmpdir(), "deploy-"));
const project = join(folder, "project");
const pinned = SUPABASE_CLI.split("@")[1]!;

/** The pinned CLI in the copy, as `npm run supabase -- …` runs it there. */
function supabase(...args: string[]): { status: number | null; output: string } {
  const { status, stdout, stderr } = runSupabase(args, {
    cwd: project,
    env: {
      ...withoutTestEnvironment(process.env),
      HOME: join(folder, "home"),
      SUPABASE_TELEMETRY_DISABLED: "1",
      DO_NOT_TRACK: "1",
    },
  });
  return { status, output: stdout + stderr };
}

let server: PostgresCluster;
let remote: string;
let admin: Database;
let owner: Database;
beforeAll(async () => {
  server = await startPostgresServer(major);
  const { hostname, port } = new URL(server.url(OWNER, database));
  // Without sslmode=disable the CLI insists on TLS, which the server does not offer.
  remote = `--remote=postgresql://${OWNER}@${hostname}:${port}/${database}?sslmode=disable`;
  cpSync(new URL("../../supabase/", import.meta.url), join(project, "supabase"), {
    recursive: true,
    // What the CLI caches for itself (its latest version, say) is not the project's.
    filter: (source) => !source.includes("/.temp"),
  });
  admin = connectPool({ url: server.url(SUPERUSER, "postgres"), poolSize: 1 });
  await admin.exec(`create database ${database}`);
  await prepareSupabaseProject(server, database);
  owner = connectPool({ url: server.url(OWNER, database), poolSize: 1 });
}, 120_000);
afterAll(async () => {
  await owner?.close();
  await admin?.close();
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** The versions the CLI recorded as pushed, in order. */
async function pushedVersions(): Promise<string[]> {
  const { rows } = await owner.query<{ version: string }>(
    "select version from supabase_migrations.schema_migrations order by version",
  );
  return rows.map(({ version }) => version);
}

/** The file of each catalog a VACUUM FULL among our migrations rewrites, by name. */
async function catalogFiles(): Promise<Record<string, string>> {
  const { rows } = await owner.query<{ catalog: string; file: string }>(
    `select c as catalog, pg_catalog.pg_relation_filenode(c)::text as file
       from unnest(array['pg_catalog.pg_attribute', 'pg_catalog.pg_class', 'pg_catalog.pg_depend',
                         'pg_catalog.pg_sequence', 'pg_catalog.pg_proc']::regclass[]) c`,
  );
  return Object.fromEntries(rows.map(({ catalog, file }) => [catalog, file]));
}

/** PostgREST's settings among authenticator's, for every database of the server. */
async function preRequestSettings(): Promise<string[]> {
  const { rows } = await owner.query<{ setting: string }>(
    `select c as setting from pg_catalog.pg_db_role_setting s, unnest(s.setconfig) c
      where s.setrole = 'authenticator'::regrole and c like 'pgrst.%'`,
  );
  return rows.map(({ setting }) => setting);
}

const ours = readdirSync(new URL("../../supabase/migrations/", import.meta.url))
  .filter((name) => name.endsWith(".sql"))
  .sort();

describe(`supabase db push (CLI ${pinned}), on PostgreSQL ${major}`, () => {
  // The first run fetches the pinned version into npm's cache (tools/supabase-cli.ts).
  it("runs the pinned CLI", { timeout: 120_000 }, () => {
    const { status, output } = supabase("--version");
    expect(status, output).toBe(0);
    expect(output.trim()).toBe(pinned);
  });

  it("reaches a server of that major", async () => {
    const { rows } = await owner.query<{ major: number }>(
      "select current_setting('server_version_num')::integer / 10000 as major",
    );
    expect(rows[0]!.major).toBe(major);
  });

  it("--dry-run names our migrations and applies none", async () => {
    const { status, output } = supabase("db", "push", remote, "--dry-run");
    expect(status, output).toBe(0);
    expect(output, "the pinned CLI's own words for its target").not.toMatch(/deprecated/i);
    const { hostname, port } = new URL(server.url(OWNER, database));
    expect(output, "the database named, not the local stack").toContain(`(${hostname}:${port})`);
    for (const file of ours) expect(output).toContain(file);
    const { rows } = await owner.query("select to_regclass('public.early_access') as early_access");
    expect(rows).toEqual([{ early_access: null }]);
  });

  it("applies them, in order, and records them", async () => {
    expect(await preRequestSettings(), "a new server sets none").toEqual([]);
    const filesBefore = await catalogFiles();
    const { status, output } = supabase("db", "push", remote, "--yes");
    expect(status, output).toBe(0);
    expect(await pushedVersions()).toEqual(ours.map((file) => file.slice(0, 14)));
    // The migration that is one VACUUM FULL ran, as the owner, rather than being skipped with a
    // warning: each catalog it names was rewritten into a new file.
    const filesAfter = await catalogFiles();
    for (const [catalog, file] of Object.entries(filesBefore)) {
      expect(filesAfter[catalog], catalog).not.toBe(file);
    }
  });

  it("sets PostgREST's pre-request function, as `postgres` may on a hosted project", async () => {
    expect(await preRequestSettings()).toEqual(["pgrst.db_pre_request=request_gate.check_request"]);
  });

  describe("then, through the local Supabase over that database", () => {
    let backend: LocalSupabase;
    beforeAll(async () => {
      const api = connectPool({ url: server.url(LOGIN_ROLE, database), poolSize: 2 });
      backend = await startLocalSupabase({ database: api, port: 0, log: () => {} });
    });
    afterAll(() => backend?.close());

    it("a sign-up answers 201 with its row, and the owner reads it back", async () => {
      const email = uniqueEmail("deployed");
      const answer = await signUpOverHttp(backend, email);
      expect(answer.status).toBe(201);
      expect(await answer.json()).toEqual([{ email }]);

      const listed = await rest(backend, { path: "early_access?select=email", key: LOCAL_SECRET_KEY });
      expect(await listed.json()).toEqual([{ email }]);

      const again = await signUpOverHttp(backend, email);
      expect(again.status).toBe(409);
      expect(await again.json()).toMatchObject({ code: "23505", message: DUPLICATE_MESSAGE });
    });
  });

  it("then pushes the owner's next migration, made with `supabase migration new`, after ours", async () => {
    const made = supabase("migration", "new", "next_change");
    expect(made.status, made.output).toBe(0);
    const next = readdirSync(join(project, "supabase/migrations")).find((name) =>
      name.endsWith("_next_change.sql"),
    );
    expect(next, made.output).toBeDefined();
    writeFileSync(join(project, "supabase/migrations", next!), "create schema next_change;\n");

    const { status, output } = supabase("db", "push", remote, "--yes");
    expect(status, output).toBe(0);
    expect(output).toContain(next);
    expect(await pushedVersions()).toEqual([...ours, next!].map((file) => file.slice(0, 14)));
    const { rows } = await owner.query("select to_regnamespace('next_change') is not null as created");
    expect(rows).toEqual([{ created: true }]);
  });
});
