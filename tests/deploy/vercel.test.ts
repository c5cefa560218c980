// Vercel: the real vercel CLI at the deploy's pin, uploading the run's build (as Build Output: the
// files, and `_headers` as the configuration's routes) to a stand-in of Vercel's API
// (stand-ins/vercel-api.ts; the API is the one part faked, as it cannot be had offline). Vercel
// has no local server for a prebuilt output, so what it would serve is read from the
// configuration uploaded. The scenarios run in order, each deploy on the state the one before left.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runPinned } from "../../tools/npx.ts";
import { vercel } from "../../tools/deploy/hosts/vercel.ts";
import { parseHeadersFile } from "../../tools/static-host/headers-file.ts";
import { useTestEnvironment } from "../test-environment.ts";
import { changedCopy, filesOf, twoNewFiles } from "./files.ts";
import { PROJECT_ID, startVercelApi, TEAM_ID, TOKEN, type VercelApi } from "./stand-ins/vercel-api.ts";

const { dist } = useTestEnvironment();
const settings = { VERCEL_TOKEN: TOKEN, VERCEL_ORG_ID: TEAM_ID, VERCEL_PROJECT_ID: PROJECT_ID };
const ADDRESS = "https://future-awaits.vercel.app";
const OUTPUT = ".vercel/output";

let api: VercelApi;
let home: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  api = await startVercelApi();
  // The CLI's settings in the test's own home; npm's cache stays where it is (tools/npx.ts).
  home = mkdtempSync(join(tmpdir(), "deploy-vercel-test-"));
  env = { ...process.env, HOME: home, XDG_DATA_HOME: join(home, ".local"), VERCEL_API_URL: api.url };
  // The first run fetches the pinned CLI into npm's cache (minutes for netlify-cli on a busy
  // machine), here rather than inside the first deploy's time.
  const fetched = await runPinned(vercel.cli, ["--version"], { env });
  expect(fetched.status, fetched.stderr).toBe(0);
}, 300_000);
afterAll(async () => {
  await api?.close();
  rmSync(home, { recursive: true, force: true });
});

describe("Vercel, with the vercel CLI against a stand-in of its API", () => {
  it("gives the site the project's vercel.app address before the first upload", async () => {
    await expect(vercel.address(settings, env)).resolves.toBe(ADDRESS);
  });

  it("uploads every file of the build, _headers as the configuration's routes, 404.html for the rest", async () => {
    await expect(vercel.upload(dist, settings, env)).resolves.toEqual({ url: ADDRESS, previous: undefined });
    const { files } = api.production()!;
    expect(Object.keys(files).sort()).toEqual(
      [
        ...filesOf(dist)
          .filter((file) => file !== "/_headers")
          .map((file) => `${OUTPUT}/static${file}`),
        `${OUTPUT}/config.json`,
      ].sort(),
    );
    for (const [file, sha] of Object.entries(files).filter(([file]) => file.includes("/static/")))
      expect(api.content(sha), file).toEqual(readFileSync(join(dist, file.slice(`${OUTPUT}/static`.length))));
    const { routes } = JSON.parse(api.content(files[`${OUTPUT}/config.json`]!).toString("utf8")) as {
      routes: {
        src?: string;
        headers?: Record<string, string>;
        status?: number;
        dest?: string;
        handle?: string;
      }[];
    };
    const promised = parseHeadersFile(readFileSync(join(dist, "_headers"), "utf8"));
    // Each rule of _headers, for the paths it names, before the files; then 404.html, with 404, for any path no file has.
    expect(routes.filter((route) => route.headers)).toEqual(
      promised.map((rule) => ({
        src: rule.path.source,
        headers: Object.fromEntries(rule.headers),
        continue: true,
      })),
    );
    expect(routes.slice(promised.length)).toEqual([
      { handle: "filesystem" },
      { src: "^/.*$", dest: "/404.html", status: 404 },
    ]);
    expect(new RegExp(routes[routes.length - 1]!.src!).test("/no-such-page")).toBe(true);
  });

  it("run again with nothing changed, uploads nothing and makes the same files production", async () => {
    const [before, uploaded] = [api.production()!, api.uploads.length];
    await expect(vercel.upload(dist, settings, env)).resolves.toEqual({ url: ADDRESS, previous: before.id });
    expect(api.uploads.length, "files uploaded again").toBe(uploaded);
    expect(api.production()!.id).not.toBe(before.id);
    expect(api.production()!.files).toEqual(before.files);
  });

  it("an upload failing half-way leaves the production deployment before, and names what to do", async () => {
    const before = api.production()!;
    const uploaded = api.uploads.length;
    const changed = changedCopy(dist, home, twoNewFiles);
    api.failUploadsAfter(1);
    try {
      await expect(vercel.upload(changed, settings, env)).rejects.toThrow(
        /production deployment before stays live/,
      );
    } finally {
      api.failUploadsAfter(undefined);
    }
    expect(api.uploads.length).toBe(uploaded + 1);
    expect(api.production()!.id).toBe(before.id);
  });

  it("names vercel rollback with the deployment before", () => {
    expect(vercel.rollback(settings, { url: ADDRESS, previous: "dpl_before" })).toBe(
      `VERCEL_ORG_ID=${TEAM_ID} VERCEL_PROJECT_ID=${PROJECT_ID} npx --yes ${vercel.cli} rollback dpl_before --yes`,
    );
  });

  it("refuses a token Vercel refuses, and an unknown project, naming the setting and never the token", async () => {
    const deployments = api.deployments.length;
    const refused = { ...settings, VERCEL_TOKEN: "aTokenVercelRefuses" };
    const failure = await vercel.upload(dist, refused, env).catch((error: Error) => error);
    expect((failure as Error).message).toMatch(/Vercel refused VERCEL_TOKEN.*Make a new token/s);
    expect((failure as Error).message).not.toContain("aTokenVercelRefuses");
    await expect(vercel.upload(dist, { ...settings, VERCEL_PROJECT_ID: "prj_unknown" }, env)).rejects.toThrow(
      /Vercel knows no project prj_unknown.*Copy VERCEL_PROJECT_ID/s,
    );
    expect(api.deployments.length).toBe(deployments);
  });

  it("says so when Vercel's API does not answer", async () => {
    await expect(vercel.address(settings, { ...env, VERCEL_API_URL: "http://127.0.0.1:9" })).rejects.toThrow(
      /Vercel's API did not answer/,
    );
  });
});
