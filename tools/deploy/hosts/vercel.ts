// Vercel: the owner's project, uploaded by the vercel CLI as a build made here (`--prebuilt`, the
// Build Output API: `.vercel/output/static` and its `config.json`), so Vercel builds nothing. Vercel
// does not read `_headers`: its rules become the configuration's routes, made from the build's
// `_headers` at each deploy, and unknown paths get `404.html` with status 404 by the last route.
//
// `vercel deploy` lists every file's SHA-1; Vercel refuses the deployment while it lacks any
// (`missing_files`), the CLI uploads those alone and asks again, and stops at a failed upload
// (vercel@58.10.0, dist/chunks/chunk-IBIZT5M4.js, lines 47356-47400): the deployment is made, and
// aliased to the production address, only once every file is in, so a failed upload leaves the
// production deployment as it was. `vercel rollback` makes an older deployment production again.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runPinned } from "../../npx.ts";
import { parseHeadersFile } from "../../static-host/headers-file.ts";
import type { Setting } from "../settings.ts";
import { askApi, cliFailure, HostFailure, tokenRefused, type HostCli } from "./calls.ts";
import type { Host } from "./host.ts";

const HOST = "Vercel";
// Newer versions do not install from the registry this project uses.
export const VERCEL_CLI = "vercel@58.10.0";

const TOKEN: Setting = {
  name: "VERCEL_TOKEN",
  secret: true,
  where: "vercel.com → Account Settings → Tokens → Create Token, scoped to the project's team",
};
const ORG: Setting = {
  name: "VERCEL_ORG_ID",
  secret: false,
  where:
    "vercel.com → the team's Settings → General → Team ID (a personal account: Account Settings → Vercel ID)",
};
const PROJECT: Setting = {
  name: "VERCEL_PROJECT_ID",
  secret: false,
  where: "vercel.com → the project (Add New → Project, once) → Settings → General → Project ID",
};

/**
 * The API the CLI calls: Vercel's, or the one VERCEL_API_URL names (the tests' stand-in). That
 * variable is the deploy's own, passed on as the CLI's `--api` flag: vercel@58.10.0 reads no
 * variable for it (dist/index.js, lines 1744-1745).
 */
const apiUrl = (env: NodeJS.ProcessEnv) => env.VERCEL_API_URL ?? "https://api.vercel.com";

/** The Build Output API's configuration for the build: `_headers`' rules, then the files, then 404.html with 404. */
function buildOutputConfig(headersFile: string): object {
  return {
    version: 3,
    routes: [
      ...parseHeadersFile(headersFile).map((rule) => ({
        src: rule.path.source,
        headers: Object.fromEntries(rule.headers),
        continue: true,
      })),
      { handle: "filesystem" },
      { src: "^/.*$", dest: "/404.html", status: 404 },
    ],
  };
}

interface Project {
  name: string;
  targets?: { production?: { id: string } };
}

/** The project, as Vercel's API gives it; a refused token or an unknown project fails, naming what to do. */
async function project(settings: Record<string, string>, env: NodeJS.ProcessEnv): Promise<Project> {
  const url = `${apiUrl(env)}/v9/projects/${settings[PROJECT.name]}?teamId=${settings[ORG.name]}`;
  const { status, body } = await askApi(HOST, url, settings[TOKEN.name]!);
  if (status === 401 || status === 403) throw tokenRefused(HOST, TOKEN);
  if (status === 404)
    throw new HostFailure(
      HOST,
      `Vercel knows no project ${settings[PROJECT.name]} in team ${settings[ORG.name]} that this token can reach, ` +
        `so nothing was uploaded. Copy VERCEL_PROJECT_ID (${PROJECT.where}) and VERCEL_ORG_ID (${ORG.where}) again, then run the deploy again.`,
    );
  if (status !== 200)
    throw new HostFailure(HOST, `Vercel's API answered ${status} for the project; try again shortly.`);
  return body as Project;
}

const CLI: HostCli = {
  host: HOST,
  cli: "vercel",
  live: "the production deployment before",
  token: TOKEN,
  refused: /token is not valid|invalid token|\b403\b|forbidden/i,
};

/** The CLI's environment: the project by the variables it reads, and no telemetry or update check. */
const cliEnv = (settings: Record<string, string>, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  ...env,
  [TOKEN.name]: settings[TOKEN.name],
  [ORG.name]: settings[ORG.name],
  [PROJECT.name]: settings[PROJECT.name],
  VERCEL_TELEMETRY_DISABLED: "1",
  NO_UPDATE_NOTIFIER: "1",
});

export const vercel: Host = {
  name: "vercel",
  cli: VERCEL_CLI,
  settings: [TOKEN, ORG, PROJECT],

  async address(settings, env) {
    return `https://${(await project(settings, env)).name}.vercel.app`;
  },

  async upload(dist, settings, env) {
    // Asked first: a refused token or an unknown project is said plainly, and the production
    // deployment now is the one rollback() names.
    const before = await project(settings, env);
    const folder = mkdtempSync(join(tmpdir(), "deploy-vercel-"));
    try {
      const output = join(folder, ".vercel", "output");
      // `_headers` is no file to serve on Vercel: its rules are the configuration's.
      cpSync(dist, join(output, "static"), {
        recursive: true,
        filter: (source) => !source.endsWith("/_headers"),
      });
      writeFileSync(
        join(output, "config.json"),
        JSON.stringify(buildOutputConfig(readFileSync(join(dist, "_headers"), "utf8")), null, 2),
      );
      const api = env.VERCEL_API_URL ? ["--api", env.VERCEL_API_URL] : [];
      const run = await runPinned(VERCEL_CLI, ["deploy", "--prebuilt", "--prod", "--yes", ...api], {
        cwd: folder,
        env: cliEnv(settings, env),
      });
      if (run.status !== 0 || !/^https:\/\//m.test(run.stdout))
        throw cliFailure(run, settings[TOKEN.name]!, CLI);
      return { url: `https://${before.name}.vercel.app`, previous: before.targets?.production?.id };
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  },

  rollback(settings, upload) {
    const previous = upload?.previous ?? "<a deployment's URL, from the project's Deployments>";
    return `VERCEL_ORG_ID=${settings[ORG.name]} VERCEL_PROJECT_ID=${settings[PROJECT.name]} npx --yes ${VERCEL_CLI} rollback ${previous} --yes`;
  },
};
