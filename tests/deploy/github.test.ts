// `npm run deploy -- --github` (tools/deploy/github.ts) against a stand-in for GitHub's REST API
// (tests/support/github-api.ts: GitHub itself cannot be had here), which opens every sealed secret
// with the key pair only it holds and records every call: a public repository (everything, the
// token's user as required reviewer), a private one on GitHub Free (no environment: said plainly,
// the password a repository secret), one on Pro (environments, no reviewer), a refused token, and
// settings missing without a terminal. No secret is ever in what it prints.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { repositoryOf, setUpGitHub } from "../../tools/deploy/github.ts";
import { givenSettings } from "../../tools/deploy/settings.ts";
import { daysAgo, startGitHubApi, type GitHubApi, type Repository } from "../support/github-api.ts";

const REPOSITORY = "ada/future-awaits";
const TOKEN = "github_pat_owner_0123456789";
const OWNER = { login: "ada", id: 7 };
const SETTINGS = {
  PUBLIC_SUPABASE_URL: "https://abcdefghijklmnopqrst.supabase.co",
  SUPABASE_SECRET_KEY: "sb_secret_0123456789abcdefghij",
  PUBLIC_SUPABASE_PUBLISHABLE_KEY: "sb_publishable_0123456789abcdef",
  SUPABASE_DB_PUSH_URL:
    "postgresql://postgres.abcdefghijklmnopqrst:p%40ss-w0rd@aws-0-eu-west-1.pooler.supabase.com:5432/postgres",
  BACKUP_PUBLIC_KEY: "age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq",
};
const SECRETS = [
  TOKEN,
  SETTINGS.SUPABASE_SECRET_KEY,
  SETTINGS.SUPABASE_DB_PUSH_URL,
  "p%40ss-w0rd",
  "p@ss-w0rd",
];

const root = mkdtempSync(join(tmpdir(), "deploy-github-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let api: GitHubApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** `settings` without `names`. */
const without = (settings: Record<string, string>, ...names: string[]) =>
  Object.fromEntries(Object.entries(settings).filter(([name]) => !names.includes(name)));

/** Runs it against a stand-in for `repository`, with `settings` as the environment: its result, what it printed, the API. */
async function setUp(repository: Partial<Repository>, settings: Record<string, string> = {}) {
  api = await startGitHubApi({
    name: REPOSITORY,
    lastCommit: daysAgo(1),
    owners: { [TOKEN]: OWNER },
    ...repository,
  });
  // No `gh` and no git remote to find: only what is given.
  const env = { GITHUB_API_URL: api.url, PATH: mkdtempSync(join(root, "bin-")), ...settings };
  const lines: string[] = [];
  const result = await setUpGitHub({
    root,
    given: givenSettings(root, env),
    env,
    out: (line) => lines.push(line),
  });
  const printed = lines.join("\n");
  for (const secret of SECRETS) expect(printed).not.toContain(secret);
  return { result, printed, api };
}

const ALL = { ...SETTINGS, GITHUB_TOKEN: TOKEN, GITHUB_REPOSITORY: REPOSITORY };

describe("npm run deploy -- --github", () => {
  it("a public repository: both environments, the owner as the push's reviewer, the default branch only; every secret sealed; the old repository password deleted", async () => {
    const { result, printed, api } = await setUp(
      { secrets: ["SUPABASE_DB_PUSH_URL"] },
      { ...ALL, SITE_URL: "https://example.com", DIGEST_ISSUE: "12" },
    );
    expect(api.environments).toEqual({
      production: { reviewers: ["ada"], branches: ["main"] },
      "production-dry-run": { reviewers: [], branches: ["main"] },
    });
    // What GitHub opens with its private key is what was given.
    expect(api.secrets).toEqual({
      "production/SUPABASE_DB_PUSH_URL": SETTINGS.SUPABASE_DB_PUSH_URL,
      "production-dry-run/SUPABASE_DB_PUSH_URL": SETTINGS.SUPABASE_DB_PUSH_URL,
      PUBLIC_SUPABASE_URL: SETTINGS.PUBLIC_SUPABASE_URL,
      SUPABASE_SECRET_KEY: SETTINGS.SUPABASE_SECRET_KEY,
    });
    expect(api.variables).toEqual({
      PUBLIC_SUPABASE_PUBLISHABLE_KEY: SETTINGS.PUBLIC_SUPABASE_PUBLISHABLE_KEY,
      BACKUP_PUBLIC_KEY: SETTINGS.BACKUP_PUBLIC_KEY,
      SITE_URL: "https://example.com",
      DIGEST_ISSUE: "12",
    });
    expect(result).toMatchObject({ repository: REPOSITORY, visibility: "public", reviewed: true });
    // The environments come before any secret: the password never waits unprotected.
    const paths = api.requests.map(({ method, path }) => `${method} ${path}`);
    const firstSecret = paths.findIndex((path) => path.startsWith("PUT") && path.includes("/secrets/"));
    expect(
      paths.findLastIndex((path) => path.startsWith("PUT") && /environments\/[^/]+$/.test(path)),
    ).toBeLessThan(firstSecret);
    expect(api.requests.every(({ token }) => token === TOKEN)).toBe(true);
    expect(printed).toContain("environment production: approved by ada, branches main");
    expect(printed).toMatch(/note: Deleted the repository secret SUPABASE_DB_PUSH_URL/);
    expect(printed).toMatch(
      /note: A public repository: .*never the counts \(PUBLISH_COUNTS=true shows them\)/,
    );
  });

  it("a private repository on GitHub Free: no environment possible, said plainly; the password a repository secret; no push until the owner allows it unreviewed", async () => {
    const { result, printed, api } = await setUp({ private: true, plan: "free" }, ALL);
    expect(api.environments).toEqual({});
    expect(api.secrets).toEqual({
      PUBLIC_SUPABASE_URL: SETTINGS.PUBLIC_SUPABASE_URL,
      SUPABASE_SECRET_KEY: SETTINGS.SUPABASE_SECRET_KEY,
      SUPABASE_DB_PUSH_URL: SETTINGS.SUPABASE_DB_PUSH_URL,
    });
    expect(result).toMatchObject({ visibility: "private", reviewed: false, environments: [] });
    expect(printed).toMatch(/note: No environment: a private repository on GitHub Free has none/);
    expect(printed).toMatch(
      /note: The migrations' job pushes nothing until a person can approve: set ALLOW_UNREVIEWED_PUSH=true/,
    );
    expect(api.variables).not.toHaveProperty("ALLOW_UNREVIEWED_PUSH");
  });

  it("the same, with ALLOW_UNREVIEWED_PUSH=true: the variable set, and the note saying what it means", async () => {
    const { printed, api } = await setUp(
      { private: true, plan: "free" },
      { ...ALL, ALLOW_UNREVIEWED_PUSH: "true" },
    );
    expect(api.variables.ALLOW_UNREVIEWED_PUSH).toBe("true");
    expect(printed).toMatch(/note: Pushes run unreviewed, as ALLOW_UNREVIEWED_PUSH=true asks/);
  });

  it("a private repository on GitHub Pro, the token as GH_TOKEN: environments on the default branch, no reviewer, said", async () => {
    const { result, printed, api } = await setUp(
      { private: true, plan: "pro" },
      { ...without(ALL, "GITHUB_TOKEN"), GH_TOKEN: TOKEN },
    );
    expect(api.environments).toEqual({
      production: { reviewers: [], branches: ["main"] },
      "production-dry-run": { reviewers: [], branches: ["main"] },
    });
    expect(Object.keys(api.secrets).sort()).toEqual([
      "PUBLIC_SUPABASE_URL",
      "SUPABASE_SECRET_KEY",
      "production-dry-run/SUPABASE_DB_PUSH_URL",
      "production/SUPABASE_DB_PUSH_URL",
    ]);
    expect(result.reviewed).toBe(false);
    expect(printed).toMatch(
      /note: No required reviewer on production: GitHub refused one \(a private repository has them only on GitHub Enterprise/,
    );
  });

  it("a refused token: fails saying so and what to do, having changed nothing", async () => {
    const refused = setUp({}, { ...ALL, GITHUB_TOKEN: "github_pat_revoked" });
    await expect(refused).rejects.toMatchObject({
      title: "GitHub token refused",
      message: expect.stringMatching(/^GitHub refused the token \(Bad credentials\): .*Make a new one/),
    });
    expect(api!.requests.map(({ method, path }) => `${method} ${path}`)).toEqual(["GET /user"]);
  });

  it("settings missing without a terminal: every one named at once, with where to find it, and GitHub not called", async () => {
    const missing = without(ALL, "SUPABASE_SECRET_KEY", "BACKUP_PUBLIC_KEY", "GITHUB_REPOSITORY");
    await expect(setUp({}, missing)).rejects.toMatchObject({
      message: expect.stringMatching(
        /GITHUB_REPOSITORY: not set \(owner\/name; .*\n {2}SUPABASE_SECRET_KEY: not set \(Project Settings .*\n {2}BACKUP_PUBLIC_KEY: not set \(your age public key/,
      ),
    });
    expect(api!.requests).toEqual([]);
  });

  it("reads the repository from git's remote when GITHUB_REPOSITORY is not set", async () => {
    const { execFileSync } = await import("node:child_process");
    const clone = mkdtempSync(join(root, "clone-"));
    execFileSync("git", ["init", "--quiet"], { cwd: clone });
    execFileSync("git", ["remote", "add", "origin", `git@github.com:${REPOSITORY}.git`], { cwd: clone });
    writeFileSync(join(clone, ".env"), "");
    api = await startGitHubApi({ name: REPOSITORY, lastCommit: daysAgo(1), owners: { [TOKEN]: OWNER } });
    const env = {
      ...process.env,
      GITHUB_API_URL: api.url,
      GITHUB_REPOSITORY: "",
      ...without(ALL, "GITHUB_REPOSITORY"),
    };
    const result = await setUpGitHub({ root: clone, given: givenSettings(clone, env), env, out: () => {} });
    expect(result.repository).toBe(REPOSITORY);
  });

  it.each([
    ["https://github.com/ada/future-awaits.git", REPOSITORY],
    ["https://github.com/ada/future-awaits", REPOSITORY],
    ["git@github.com:ada/future-awaits.git", REPOSITORY],
    ["ssh://git@github.com/ada/future.awaits.git", "ada/future.awaits"],
    ["https://gitlab.com/ada/future-awaits.git", undefined],
    [undefined, undefined],
  ])("the remote %s is the repository %s", (remote, repository) => {
    expect(repositoryOf(remote)).toBe(repository);
  });
});
