// Netlify: the real netlify-cli at the deploy's pin, uploading the run's build to a stand-in of
// Netlify's API (stand-ins/netlify-api.ts; the API is the one part faked, as it cannot be had
// offline). The scenarios run in order, each deploy on the state the one before left.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runPinned } from "../../tools/npx.ts";
import { netlify } from "../../tools/deploy/hosts/netlify.ts";
import { parseHeadersFile } from "../../tools/static-host/headers-file.ts";
import { useTestEnvironment } from "../test-environment.ts";
import { changedCopy, filesOf, twoNewFiles } from "./files.ts";
import { AUTH_TOKEN, SITE_ID, startNetlifyApi, type NetlifyApi } from "./stand-ins/netlify-api.ts";

const { dist } = useTestEnvironment();
const settings = { NETLIFY_AUTH_TOKEN: AUTH_TOKEN, NETLIFY_SITE_ID: SITE_ID };
const ADDRESS = "https://future-awaits-owner.netlify.app";
const run = promisify(execFile);

let api: NetlifyApi;
let home: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  api = await startNetlifyApi();
  // netlify-cli's settings in the test's own home; npm's cache stays where it is (tools/npx.ts).
  home = mkdtempSync(join(tmpdir(), "deploy-netlify-test-"));
  env = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), ...api.env };
  // The first run fetches the pinned CLI into npm's cache (minutes for netlify-cli on a busy
  // machine), here rather than inside the first deploy's time.
  const fetched = await runPinned(netlify.cli, ["--version"], { env });
  expect(fetched.status, fetched.stderr).toBe(0);
}, 300_000);
afterAll(async () => {
  await api?.close();
  rmSync(home, { recursive: true, force: true });
});

/** The `[[headers]]` of the netlify.toml netlify-cli made and uploaded, as `_headers`' rules read. */
function uploadedHeaders(): { source: string; headers: [string, string][] }[] {
  const toml = api.uploads.find((upload) => upload.path === "/netlify.toml");
  const blocks = api.content(toml!.sha).toString("utf8").split("[[headers]]").slice(1);
  return blocks.map((block) => ({
    source: JSON.parse(block.match(/^for = (".*")$/m)![1]!) as string,
    headers: [...block.split("[headers.values]")[1]!.matchAll(/^\s*([\w-]+) = (".*")$/gm)].map(
      ([, name, value]) => [name!, JSON.parse(value!) as string] as [string, string],
    ),
  }));
}

describe("Netlify, with netlify-cli against a stand-in of its API", () => {
  it("gives the site the project's netlify.app address before the first upload", async () => {
    await expect(netlify.address(settings, env)).resolves.toBe(ADDRESS);
  });

  it("uploads every file of the build, _headers as the netlify.toml's headers, and publishes it", async () => {
    await expect(netlify.upload(dist, settings, env)).resolves.toEqual({ url: ADDRESS, previous: undefined });
    const files = filesOf(dist);
    expect(files).toContain("/404.html");
    // netlify-cli reads `_headers` into the configuration it uploads (netlify.toml), not as a file.
    expect(api.uploads.map((upload) => upload.path).sort()).toEqual(
      [...files.filter((file) => file !== "/_headers"), "/netlify.toml"].sort(),
    );
    for (const { path, sha } of api.uploads.filter((upload) => upload.path !== "/netlify.toml"))
      expect(api.content(sha), path).toEqual(readFileSync(join(dist, path)));
    const promised = parseHeadersFile(readFileSync(join(dist, "_headers"), "utf8"));
    expect(uploadedHeaders()).toEqual(promised.map(({ source, headers }) => ({ source, headers })));
    expect(api.published()).toBe(api.deploys.at(-1));
  });

  it("run again with nothing changed, uploads nothing and publishes the same files", async () => {
    const [before, uploaded] = [api.published()!, api.uploads.length];
    await expect(netlify.upload(dist, settings, env)).resolves.toEqual({ url: ADDRESS, previous: before.id });
    expect(api.uploads.length, "files uploaded again").toBe(uploaded);
    expect(api.published()!.id).not.toBe(before.id);
    expect(api.published()!.files).toEqual(before.files);
  });

  it("an upload failing half-way leaves the deploy published before, and names what to do", async () => {
    const before = api.published()!;
    const changed = changedCopy(dist, home, twoNewFiles);
    api.failUploadsAfter(1);
    try {
      await expect(netlify.upload(changed, settings, env)).rejects.toThrow(
        /deploy published before stays live/,
      );
    } finally {
      api.failUploadsAfter(undefined);
    }
    expect(api.uploads.filter((upload) => upload.path.endsWith("changed.txt"))).toHaveLength(1);
    expect(api.published()!.id).toBe(before.id);
  });

  it("names the command that publishes the deploy before, which does", async () => {
    const [older, newer] = api.deploys.filter((deploy) => deploy.state === "ready").slice(-2);
    const command = netlify.rollback(settings, { url: ADDRESS, previous: older!.id });
    expect(command).toContain(`"deploy_id":"${older!.id}"`);
    expect(api.published()!.id).toBe(newer!.id);
    // Not spawnSync: the stand-in answers from this process.
    await run("sh", ["-c", command], { env: { ...env, NETLIFY_AUTH_TOKEN: AUTH_TOKEN } });
    expect(api.published()!.id).toBe(older!.id);
  });

  it("refuses a token Netlify refuses, and an unknown project, naming the setting and never the token", async () => {
    const deploys = api.deploys.length;
    const refused = { ...settings, NETLIFY_AUTH_TOKEN: "a-token-netlify-refuses" };
    const failure = await netlify.upload(dist, refused, env).catch((error: Error) => error);
    expect((failure as Error).message).toMatch(/Netlify refused NETLIFY_AUTH_TOKEN.*Make a new token/s);
    expect((failure as Error).message).not.toContain("a-token-netlify-refuses");
    await expect(
      netlify.upload(dist, { ...settings, NETLIFY_SITE_ID: "no-such-project" }, env),
    ).rejects.toThrow(/Netlify knows no project no-such-project.*Copy NETLIFY_SITE_ID again/s);
    expect(api.deploys.length).toBe(deploys);
  });

  it("says so when Netlify's API does not answer", async () => {
    await expect(
      netlify.address(settings, { ...env, NETLIFY_API_URL: "http://127.0.0.1:9" }),
    ).rejects.toThrow(/Netlify's API did not answer/);
  });
});
