// Cloudflare: the real wrangler at the deploy's pin, uploading the run's build to a stand-in of
// Cloudflare's API (stand-ins/cloudflare-api.ts; the API is the one part faked, as it cannot be
// had offline), and what it uploaded served by wrangler's own local server (workerd), asked over
// plain HTTP. The scenarios run in order, each deploy on the state the one before left.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runPinned } from "../../tools/npx.ts";
import { cloudflare } from "../../tools/deploy/hosts/cloudflare.ts";
import { checkHosting } from "../../tools/sign-ups/site.ts";
import { parseHeadersFile } from "../../tools/static-host/headers-file.ts";
import { useTestEnvironment } from "../test-environment.ts";
import { changedCopy, filesOf, twoNewFiles } from "./files.ts";
import { ACCOUNT_ID, API_TOKEN, startCloudflareApi, type CloudflareApi } from "./stand-ins/cloudflare-api.ts";
import { startWranglerDev } from "./wrangler-dev.ts";

const { dist } = useTestEnvironment();
const settings = {
  CLOUDFLARE_API_TOKEN: API_TOKEN,
  CLOUDFLARE_ACCOUNT_ID: ACCOUNT_ID,
  CLOUDFLARE_WORKER_NAME: "future-awaits",
};
const ADDRESS = "https://future-awaits.owner.workers.dev";
const run = promisify(execFile);

let api: CloudflareApi;
let home: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  api = await startCloudflareApi();
  // wrangler's logs and settings in the test's own home; npm's cache stays where it is (tools/npx.ts).
  home = mkdtempSync(join(tmpdir(), "deploy-cloudflare-test-"));
  env = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    CLOUDFLARE_API_BASE_URL: `${api.url}/client/v4`,
  };
  // The first run fetches the pinned CLI into npm's cache (minutes for netlify-cli on a busy
  // machine), here rather than inside the first deploy's time.
  const fetched = await runPinned(cloudflare.cli, ["--version"], { env });
  expect(fetched.status, fetched.stderr).toBe(0);
}, 300_000);
afterAll(async () => {
  await api?.close();
  rmSync(home, { recursive: true, force: true });
});

/** The live version's files, as uploaded, with its `_headers`: what Cloudflare serves. */
function liveFiles(): string {
  const live = api.live()!;
  const folder = join(home, `live-${live.id}`);
  for (const [path, hash] of Object.entries(live.manifest)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    writeFileSync(join(folder, path), api.content(hash));
  }
  writeFileSync(join(folder, "_headers"), live.config._headers ?? "");
  return folder;
}

describe("Cloudflare, with wrangler against a stand-in of its API", () => {
  it("gives the site its workers.dev address before the first upload", async () => {
    await expect(cloudflare.address(settings, env)).resolves.toBe(ADDRESS);
  });

  it("uploads every file of the build, _headers in the version's configuration, and makes it live there", async () => {
    await expect(cloudflare.upload(dist, settings, env)).resolves.toEqual({ url: ADDRESS });
    const files = filesOf(dist);
    expect(files).toContain("/404.html");
    // wrangler sends `_headers` with the version, not as a file to serve (wrangler-dist/cli.js, createAssetsIgnoreFunction).
    expect(api.uploads.map((upload) => upload.path).sort()).toEqual(
      files.filter((file) => file !== "/_headers"),
    );
    for (const { path, hash } of api.uploads)
      expect(api.content(hash), path).toEqual(readFileSync(join(dist, path)));
    expect(api.live()!.config).toMatchObject({
      not_found_handling: "404-page",
      _headers: readFileSync(join(dist, "_headers"), "utf8"),
    });
  });

  it("run again with nothing changed, uploads nothing and makes the same files live", async () => {
    const [before, uploaded] = [api.live()!, api.uploads.length];
    await expect(cloudflare.upload(dist, settings, env)).resolves.toEqual({ url: ADDRESS });
    expect(api.uploads.length, "files uploaded again").toBe(uploaded);
    expect(api.live()!.id).not.toBe(before.id);
    expect(api.live()!.manifest).toEqual(before.manifest);
  });

  it("an upload failing half-way leaves the version live before, and names what to do", async () => {
    const before = api.live()!;
    const changed = changedCopy(dist, home, twoNewFiles);
    api.failUploadsAfter(1);
    try {
      const failure = cloudflare.upload(changed, settings, env);
      await expect(failure).rejects.toThrow(/version live before stays live/);
    } finally {
      api.failUploadsAfter(undefined);
    }
    expect(api.uploads.filter((upload) => upload.path.endsWith("changed.txt"))).toHaveLength(1);
    expect(api.live()!.id).toBe(before.id);
  });

  it("refuses a token Cloudflare refuses, naming the setting and never the token", async () => {
    const refused = { ...settings, CLOUDFLARE_API_TOKEN: "a-token-cloudflare-refuses" };
    const versions = api.versions.length;
    for (const attempt of [cloudflare.address(refused, env), cloudflare.upload(dist, refused, env)]) {
      const failure = await attempt.then(
        () => expect.fail("resolved"),
        (error: Error) => error,
      );
      expect(failure.message).toMatch(/Cloudflare refused CLOUDFLARE_API_TOKEN.*Make a new token/s);
      expect(failure.message).not.toContain("a-token-cloudflare-refuses");
    }
    expect(api.versions.length).toBe(versions);
  });

  it("says so when Cloudflare's API does not answer", async () => {
    const closed = { ...env, CLOUDFLARE_API_BASE_URL: "http://127.0.0.1:9/client/v4" };
    await expect(cloudflare.address(settings, closed)).rejects.toThrow(/Cloudflare's API did not answer/);
  });

  it("names the command that makes the version before live again, which does", async () => {
    const [older, newer] = api.versions.slice(-2);
    expect(api.live()).toBe(newer);
    const command = cloudflare.rollback(settings);
    expect(command).toBe(
      `CLOUDFLARE_ACCOUNT_ID=${ACCOUNT_ID} npx --yes ${cloudflare.cli} rollback --name future-awaits`,
    );
    // Not spawnSync: the stand-in answers from this process. Without a terminal, wrangler takes its prompts' defaults.
    await run("sh", ["-c", command], { env: { ...env, CLOUDFLARE_API_TOKEN: API_TOKEN } });
    expect(api.live()).toBe(older);
  });
});

describe("what Cloudflare serves, in wrangler's own local server, as the deploy's checks see it", () => {
  // The promise the checks hold a host to (tools/sign-ups/site.ts's checkHosting, which the
  // deploy runs on the live site): public/_headers, whatever the folder served holds.
  const rules = parseHeadersFile(readFileSync(new URL("../../public/_headers", import.meta.url), "utf8"));
  const problemsAt = async (folder: string, notFound?: "single-page-application") => {
    const worker = await startWranglerDev(folder, notFound);
    try {
      return (await checkHosting(worker.url, rules)).map(({ title, message }) => `${title}: ${message}`);
    } finally {
      await worker.stop();
    }
  };

  it("serves the uploaded version as promised: headers, 404.html with 404, /_astro/ immutable", async () => {
    expect(await problemsAt(liveFiles())).toEqual([]);
  });

  it.each([
    {
      fixture: "a single-page fallback (index.html for every path)",
      folder: () => liveFiles(),
      notFound: "single-page-application" as const,
      problem:
        /^Unknown paths not answered 404: .*answered 200 .*with the home page: the host serves index\.html for every path/,
    },
    {
      fixture: "a build without 404.html",
      folder: () => changedCopy(dist, home, (folder) => rmSync(join(folder, "404.html"))),
      problem: /^Unknown paths not answered 404: /,
    },
    {
      fixture: "a _headers without X-Frame-Options",
      folder: () =>
        changedCopy(dist, home, (folder) => {
          const headers = readFileSync(join(folder, "_headers"), "utf8");
          writeFileSync(join(folder, "_headers"), headers.replace(/^\s*X-Frame-Options:.*\n/m, ""));
        }),
      problem: /^Header missing: .*\(\/\) does not send x-frame-options/,
    },
  ])("fails the checks for $fixture", async ({ folder, notFound, problem }) => {
    const problems = await problemsAt(folder(), notFound);
    expect(
      problems.some((line) => problem.test(line)),
      problems.join("\n"),
    ).toBe(true);
  });
});
