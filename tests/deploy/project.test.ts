// The deploy's project step (tools/deploy/supabase.ts) with the pinned Supabase CLI, against a new
// project on each major (new-project.ts): what the project lacks, the push, the page's sign-up
// path, and the failures an owner meets first (a wrong password, a project one migration behind,
// a secret key in the publishable key's place), none of which may show the password.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LOCAL_PUBLISHABLE_KEY, LOCAL_SECRET_KEY } from "../../config/local-supabase.ts";
import type { LocalSupabase } from "../../tools/local-supabase/index.ts";
import { pendingMigrations, pushMigrations, repositoryMigrations } from "../../tools/deploy/migrations.ts";
import { checkPagePath, fetchPublishableKey, refusePublishableKey } from "../../tools/deploy/supabase.ts";
import { newProject, type NewProject } from "./new-project.ts";

const major = inject("postgresMajor");

let project: NewProject;
beforeAll(async () => {
  project = await newProject(major);
}, 120_000);
afterAll(() => project?.close());

describe(`the deploy's project step, on PostgreSQL ${major}`, () => {
  it(
    "lists every migration a new project lacks, applies them, then lists none",
    { timeout: 180_000 },
    async () => {
      const { root, dbUrl, cliEnv } = project;
      expect(await pendingMigrations(root, dbUrl, cliEnv)).toEqual(repositoryMigrations(root));
      await pushMigrations(root, dbUrl, cliEnv);
      expect(await pendingMigrations(root, dbUrl, cliEnv)).toEqual([]);
    },
  );

  it("finds the project one migration behind", { timeout: 60_000 }, async () => {
    const { root, dbUrl, cliEnv, owner } = project;
    const last = repositoryMigrations(root).at(-1)!;
    await owner.query("delete from supabase_migrations.schema_migrations where version = $1", [
      last.slice(0, 14),
    ]);
    try {
      expect(await pendingMigrations(root, dbUrl, cliEnv)).toEqual([last]);
    } finally {
      await owner.query("insert into supabase_migrations.schema_migrations (version, name) values ($1, $2)", [
        last.slice(0, 14),
        last.slice(15, -4),
      ]);
    }
  });

  it(
    "refuses a wrong password, saying where to find the right one, never showing it",
    { timeout: 60_000 },
    async () => {
      const { root, wrongPasswordUrl, cliEnv } = project;
      const message = await pendingMigrations(root, wrongPasswordUrl, cliEnv).then(
        () => "",
        (error: Error) => error.message,
      );
      expect(message).toMatch(/refused the password in SUPABASE_DB_PUSH_URL/);
      expect(message).not.toContain("not-the-password");
    },
  );

  describe("the page's sign-up path, through the project's API", () => {
    let api: LocalSupabase;
    beforeAll(async () => {
      api = await project.startApi();
    });

    it("passes: the database refuses the test address, and stores nothing", async () => {
      await checkPagePath(api.url, LOCAL_PUBLISHABLE_KEY);
      const { rows } = await project.owner.query("select count(*)::int as stored from public.early_access");
      expect(rows).toEqual([{ stored: 0 }]);
    });

    it("fails, naming the key, where the key is not the project's", async () => {
      await expect(checkPagePath(api.url, "sb_publishable_not_this_projects_key")).rejects.toThrow(
        /refused the key from PUBLIC_SUPABASE_PUBLISHABLE_KEY as invalid/,
      );
    });
  });
});

describe("the publishable key refused", () => {
  it.each([
    ["a secret key", LOCAL_SECRET_KEY, /secret key/],
    [
      "a legacy service_role JWT",
      `x.${Buffer.from('{"role":"service_role"}').toString("base64url")}.y`,
      /secret key/,
    ],
    ["a publishable key", LOCAL_PUBLISHABLE_KEY, null],
  ])("as the publishable key, %s", (_, key, refused) => {
    const answer = refusePublishableKey(key);
    if (refused) expect(answer).toMatch(refused);
    else expect(answer).toBeNull();
  });
});
describe("the publishable key fetched with an access token (projects api-keys)", () => {
  // Supabase's Management API, faked: the only thing here that cannot be had offline. The pinned
  // CLI reaches it through a profile (SUPABASE_PROFILE, a file naming its api_url), the CLI's own
  // switch for another Supabase platform.
  let api: Server;
  const calls: string[] = [];
  let profile: string;
  beforeAll(async () => {
    api = createServer((req, res) => {
      calls.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      res.setHeader("content-type", "application/json");
      if (req.headers.authorization !== "Bearer sbp_0123456789abcdef0123456789abcdef01234567") {
        res.statusCode = 401;
        res.end(JSON.stringify({ message: "Unauthorized" }));
      } else if (req.url === "/v1/projects/abcdefghijklmnopqrst/api-keys") {
        res.end(
          JSON.stringify([
            { name: "anon", api_key: "eyJ.legacy.anon", type: "legacy" },
            { name: "default", api_key: LOCAL_SECRET_KEY, type: "secret" },
            { name: "default", api_key: LOCAL_PUBLISHABLE_KEY, type: "publishable" },
          ]),
        );
      } else {
        res.statusCode = 404;
        res.end("{}");
      }
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    profile = join(project.root, "profile.yaml");
    const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    writeFileSync(
      profile,
      `name: stand-in\napi_url: ${url}\ndashboard_url: ${url}/dashboard\nproject_host: supabase.test\n`,
    );
  });
  afterAll(() => new Promise((resolve) => api?.close(resolve)));

  const env = (token: string) => ({
    ...project.cliEnv,
    SUPABASE_PROFILE: profile,
    SUPABASE_ACCESS_TOKEN: token,
  });

  it("takes the publishable one, never the secret one", { timeout: 60_000 }, async () => {
    const key = await fetchPublishableKey(
      project.root,
      "abcdefghijklmnopqrst",
      env("sbp_0123456789abcdef0123456789abcdef01234567"),
    );
    expect(key).toBe(LOCAL_PUBLISHABLE_KEY);
    expect(calls).toContain(
      "GET /v1/projects/abcdefghijklmnopqrst/api-keys Bearer sbp_0123456789abcdef0123456789abcdef01234567",
    );
  });

  it("says where to find a token the API refuses", { timeout: 60_000 }, async () => {
    await expect(
      fetchPublishableKey(
        project.root,
        "abcdefghijklmnopqrst",
        env("sbp_ffffffffffffffffffffffffffffffffffffffff"),
      ),
    ).rejects.toThrow(/SUPABASE_ACCESS_TOKEN .*dashboard\/account\/tokens/);
  });
});
