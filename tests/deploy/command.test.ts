// `npm run deploy` as an owner runs it, in a copy of the project, against a new Supabase project
// (new-project.ts) and a static host the test starts on the copy's dist/ (tools/static-host, which
// applies _headers and answers unknown paths with 404.html, as Netlify and Cloudflare do): bad
// settings first, each refused before anything is built; then `--host none` on a new project whose
// API does not answer yet (the migrations applied, then nothing built); then again once it answers
// (nothing applied, the build made); then `--check` against the site it built, passing, and failing
// on each fixture an owner can meet (a header dropped, no 404 page, a build for another project, a
// project one migration behind). The project's API starts once the migrations are in, as it reads
// the tables once (new-project.ts); Supabase's own reloads them on every change.
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_PUBLISHABLE_KEY, LOCAL_SECRET_KEY } from "../../config/local-supabase.ts";
import { WRANGLER } from "../../tools/deploy/hosts/cloudflare.ts";
import { repositoryMigrations } from "../../tools/deploy/migrations.ts";
import { runNpmScript } from "../../tools/npm-script.ts";
import { runPinned } from "../../tools/npx.ts";
import { freePorts } from "../../tools/processes.ts";
import { createStaticHost } from "../../tools/static-host/static-host.ts";
import { copyProject } from "../support/project-copy.ts";
import { filesOf } from "./files.ts";
import { ACCOUNT_ID, API_TOKEN, startCloudflareApi, type CloudflareApi } from "./stand-ins/cloudflare-api.ts";
import { serveLiveVersion, type LiveSite } from "./stand-ins/cloudflare-site.ts";
import { newProject, PASSWORD, type NewProject } from "./new-project.ts";

let copy: string;
let project: NewProject;
let apiUrl: string;
let site: Server;
let siteUrl: string;
beforeAll(async () => {
  copy = copyProject("future-awaits-deploy-");
  project = await newProject(17);
  apiUrl = `http://127.0.0.1:${freePorts(1)[0]}`;
  const host = createStaticHost({ root: join(copy, "dist") });
  site = createServer((req, res) => void host(req, res));
  await new Promise<void>((listening) => site.listen(0, "127.0.0.1", listening));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
}, 180_000);
afterAll(async () => {
  await new Promise((closed) => site?.close(closed));
  await project?.close();
  if (copy) rmSync(copy, { recursive: true, force: true });
});

/** Every setting the command reads, as an owner's environment would hold them. */
const settings = () => ({
  PUBLIC_SUPABASE_URL: apiUrl,
  PUBLIC_SUPABASE_PUBLISHABLE_KEY: LOCAL_PUBLISHABLE_KEY,
  SUPABASE_DB_PUSH_URL: project.dbUrl,
  SITE_URL: siteUrl,
});

/** `npm run deploy -- <args>` in the copy, without a terminal, with `env` and nothing of the run's. */
async function deploy(
  args: string[],
  env: Record<string, string>,
): Promise<{ status: number | null; output: string }> {
  const { status, stdout, stderr } = await runNpmScript("deploy", args, {
    cwd: copy,
    env: {
      ...project.cliEnv,
      // The pinned CLI from npm's cache, as the owner's own runs find it.
      npm_config_cache: process.env.npm_config_cache || join(homedir(), ".npm"),
      ...env,
    },
  });
  return { status, output: `${stdout}${stderr}` };
}

describe("npm run deploy, refusing bad settings before anything is built", () => {
  it("names every missing setting at once, and where to find each", async () => {
    const { status, output } = await deploy(["--host", "none"], { SITE_URL: siteUrl });
    expect(status).toBe(1);
    for (const name of ["PUBLIC_SUPABASE_URL", "PUBLIC_SUPABASE_PUBLISHABLE_KEY", "SUPABASE_DB_PUSH_URL"])
      expect(output).toMatch(new RegExp(`${name}: not set \\(.+\\)`));
    expect(output).not.toMatch(/SITE_URL: not set/);
  });

  it("refuses a secret key as the publishable key, without showing it", async () => {
    const { status, output } = await deploy(["--host", "none"], {
      ...settings(),
      PUBLIC_SUPABASE_PUBLISHABLE_KEY: LOCAL_SECRET_KEY,
    });
    expect(status).toBe(1);
    expect(output).toMatch(/PUBLIC_SUPABASE_PUBLISHABLE_KEY: this is a secret key/);
    expect(output).not.toContain(LOCAL_SECRET_KEY);
  });

  it("stops at a wrong database password, saying so without it", { timeout: 60_000 }, async () => {
    const { status, output } = await deploy(["--host", "none", "--yes"], {
      ...settings(),
      SUPABASE_DB_PUSH_URL: project.wrongPasswordUrl,
    });
    expect(status).toBe(1);
    expect(output).toMatch(/refused the password in SUPABASE_DB_PUSH_URL/);
    expect(output).not.toContain("not-the-password");
  });

  it(
    "asks before applying a migration, and without a terminal applies none",
    { timeout: 60_000 },
    async () => {
      const { status, output } = await deploy(["--host", "none"], settings());
      expect(status).toBe(1);
      expect(output).toMatch(/run again with --yes/);
      const { rows } = await project.owner.query("select to_regclass('public.early_access') as table");
      expect(rows).toEqual([{ table: null }]);
    },
  );

  it("built nothing", () => {
    expect(existsSync(join(copy, "dist"))).toBe(false);
  });
});

describe("npm run deploy -- --host none --yes, on a new project", () => {
  it(
    "applies every migration, then, the project's API not answering, builds nothing",
    { timeout: 120_000 },
    async () => {
      const { status, output } = await deploy(["--host", "none", "--yes"], settings());
      expect(status, output).toBe(1);
      const migrations = repositoryMigrations(copy);
      for (const file of migrations) expect(output).toContain(file);
      expect(output).toContain(`Applied ${migrations.length}.`);
      const { rows } = await project.owner.query<{ count: number }>(
        "select count(*)::int as count from supabase_migrations.schema_migrations",
      );
      expect(rows[0]!.count).toBe(migrations.length);
      expect(output).toMatch(/Cannot reach the Supabase API/);
      expect(existsSync(join(copy, "dist"))).toBe(false);
      expect(output).not.toContain(PASSWORD);
    },
  );

  it(
    "run again once the API answers, applies nothing, tries the page's path and builds for the project",
    { timeout: 240_000 },
    async () => {
      await project.startApi(Number(new URL(apiUrl).port));
      const { status, output } = await deploy(["--host", "none", "--yes"], settings());
      expect(status, output).toBe(0);
      expect(output).toContain("It has every migration of the repository.");
      expect(output).not.toMatch(/Applied \d/);
      expect(output).toContain("The page's sign-up path answers as it must.");
      expect(readFileSync(join(copy, "dist", "index.html"), "utf8")).toContain(apiUrl);
      expect(output).toMatch(/Upload the folder whole/);
    },
  );

  describe("then --check against the site it built", () => {
    const check = (env: Record<string, string> = {}) => deploy(["--check"], { ...settings(), ...env });

    it("passes every check, the project's migrations included", { timeout: 60_000 }, async () => {
      const { status, output } = await check();
      expect(status, output).toBe(0);
      expect(output).toMatch(/✓ .* answers 200 and sends sign-ups to/);
      expect(output).toMatch(/✓ the host sends public\/_headers/);
      expect(output).toMatch(/✓ the page's sign-up path answers as it must/);
      expect(output).toMatch(/✓ the project has every migration of the repository/);
    });

    it("says it skipped the migrations without SUPABASE_DB_PUSH_URL", { timeout: 60_000 }, async () => {
      const { status, output } = await check({ SUPABASE_DB_PUSH_URL: "" });
      expect(status, output).toBe(0);
      expect(output).toMatch(/skipped: the project's migrations/);
    });

    it("fails where the host drops a header of public/_headers", { timeout: 60_000 }, async () => {
      const file = join(copy, "dist", "_headers");
      const kept = readFileSync(file, "utf8");
      writeFileSync(file, kept.replace(/^\s*X-Content-Type-Options:.*$/m, ""));
      try {
        const { status, output } = await check();
        expect(status).toBe(1);
        expect(output).toMatch(/Header missing: .* does not send x-content-type-options/);
      } finally {
        writeFileSync(file, kept);
      }
    });

    it("fails where unknown paths get no 404 page", { timeout: 60_000 }, async () => {
      const page = join(copy, "dist", "404.html");
      renameSync(page, `${page}.away`);
      try {
        const { status, output } = await check();
        expect(status).toBe(1);
        expect(output).toMatch(/Unknown paths not answered 404/);
      } finally {
        renameSync(`${page}.away`, page);
      }
    });

    it("fails where the site was built for another project", { timeout: 60_000 }, async () => {
      const other = await project.startApi();
      const { status, output } = await check({ PUBLIC_SUPABASE_URL: other.url });
      expect(status).toBe(1);
      expect(output).toMatch(new RegExp(`does not send sign-ups to ${other.url}`));
    });

    it("fails where the project is one migration behind", { timeout: 60_000 }, async () => {
      const last = repositoryMigrations(copy).at(-1)!;
      const version = last.slice(0, 14);
      const { rows } = await project.owner.query<{ name: string; statements: string[] }>(
        "delete from supabase_migrations.schema_migrations where version = $1 returning name, statements",
        [version],
      );
      try {
        const { status, output } = await check();
        expect(status).toBe(1);
        expect(output).toMatch(new RegExp(`lacks 1 of the repository's migrations \\(${last}\\)`));
      } finally {
        await project.owner.query(
          "insert into supabase_migrations.schema_migrations (version, name, statements) values ($1, $2, $3)",
          [version, rows[0]!.name, rows[0]!.statements],
        );
      }
    });
  });
});

describe("npm run deploy -- --yes, to Cloudflare (wrangler against a stand-in of its API)", () => {
  let cloudflare: CloudflareApi;
  let live: LiveSite;
  let cloudflareEnv: Record<string, string>;
  beforeAll(async () => {
    cloudflare = await startCloudflareApi();
    live = await serveLiveVersion(cloudflare);
    cloudflareEnv = {
      ...settings(),
      SITE_URL: live.url,
      CLOUDFLARE_API_TOKEN: API_TOKEN,
      CLOUDFLARE_ACCOUNT_ID: ACCOUNT_ID,
      CLOUDFLARE_API_BASE_URL: `${cloudflare.url}/client/v4`,
      WRANGLER_SEND_METRICS: "false",
      XDG_CONFIG_HOME: join(copy, ".config"),
    };
    // wrangler at the deploy's pin, fetched into npm's cache before the clock of any test starts.
    await runPinned(WRANGLER, ["--version"]);
  }, 300_000);
  afterAll(async () => {
    await live?.close();
    await cloudflare?.close();
  });

  it("uploads nothing when the project step fails", { timeout: 60_000 }, async () => {
    const { status, output } = await deploy(["--yes"], {
      ...cloudflareEnv,
      SUPABASE_DB_PUSH_URL: project.wrongPasswordUrl,
    });
    expect(status).toBe(1);
    expect(output).toMatch(/refused the password/);
    expect(cloudflare.uploads).toEqual([]);
    expect(cloudflare.live()).toBeUndefined();
  });

  it(
    "uploads every file of the build, checks the live site and prints its address",
    { timeout: 240_000 },
    async () => {
      const { status, output } = await deploy(["--yes"], cloudflareEnv);
      expect(status, output).toBe(0);
      expect(new Set(cloudflare.uploads.map(({ path }) => path))).toEqual(
        new Set(filesOf(join(copy, "dist")).filter((path) => path !== "/_headers")),
      );
      expect(cloudflare.live()!.config._headers).toBe(readFileSync(join(copy, "dist", "_headers"), "utf8"));
      expect(output).toMatch(/✓ the host sends public\/_headers/);
      expect(output).toContain(`Live: ${live.url}`);
      expect(output).not.toContain(API_TOKEN);
    },
  );

  it(
    "run again with nothing changed, applies nothing and uploads only what the host lacks",
    { timeout: 240_000 },
    async () => {
      const before = cloudflare.uploads.length;
      const live1 = cloudflare.live()!.id;
      const { status, output } = await deploy(["--yes"], cloudflareEnv);
      expect(status, output).toBe(0);
      expect(output).toContain("It has every migration of the repository.");
      const again = cloudflare.uploads.slice(before).map(({ path }) => path);
      // The calendar event carries the time it was built (its DTSTAMP): the one file a new build changes.
      expect(again).toEqual(["/launch.ics"]);
      expect(cloudflare.live()!.id).not.toBe(live1);
      expect(output).toMatch(/✓ .* answers 200 and sends sign-ups to/);
    },
  );

  it(
    "fails a live site that drops a header, naming it and the command that puts the previous version back",
    { timeout: 240_000 },
    async () => {
      live.dropHeader("X-Frame-Options");
      try {
        const { status, output } = await deploy(["--yes"], cloudflareEnv);
        expect(status).toBe(1);
        expect(output).toMatch(/Header missing: .* does not send x-frame-options/);
        expect(output).toMatch(
          new RegExp(`To put the previous version back: .*${WRANGLER.replace(".", "\\.")} rollback`),
        );
        expect(output).not.toContain("Live:");
      } finally {
        live.dropHeader(undefined);
      }
    },
  );
});
