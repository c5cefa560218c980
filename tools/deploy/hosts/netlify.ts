// Netlify: a project (a "site" in its API) the owner has made, uploaded to by netlify-cli with no
// build on Netlify's side. Netlify reads the build's `_headers` and answers unknown paths with
// `404.html` and status 404 on its own.
//
// `netlify deploy` lists every file's SHA-1, uploads only those Netlify lacks, and the deploy is
// published once every one is in (netlify-cli@27.10.2, dist/utils/deploy/deploy-site.js:
// updateSiteDeploy, uploadFiles, then waitForDeploy): a failed upload leaves the published deploy
// as it was. Netlify keeps every deploy; its API's restoreSiteDeploy publishes an older one again.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runPinned } from "../../npx.ts";
import type { Setting } from "../settings.ts";
import { askApi, cliFailure, HostFailure, tokenRefused, type HostCli } from "./calls.ts";
import type { Host } from "./host.ts";

const HOST = "Netlify";
export const NETLIFY_CLI = "netlify-cli@27.10.2";

const TOKEN: Setting = {
  name: "NETLIFY_AUTH_TOKEN",
  secret: true,
  where: "app.netlify.com → User settings → Applications → Personal access tokens → New access token",
};
const SITE: Setting = {
  name: "NETLIFY_SITE_ID",
  secret: false,
  where:
    "app.netlify.com → your project (Add new project → Deploy manually, once) → Project configuration → Project ID",
};

/**
 * The API netlify-cli calls: NETLIFY_API_URL's, read as it reads it (`/api/v1` when the address
 * has no path: dist/commands/base-command.js, line 515), else Netlify's.
 */
function apiBase(env: NodeJS.ProcessEnv): string {
  const given = env.NETLIFY_API_URL;
  if (!given) return "https://api.netlify.com/api/v1";
  const { origin } = new URL(given);
  return given === origin ? `${origin}/api/v1` : given.replace(/\/$/, "");
}

interface Site {
  ssl_url: string;
  published_deploy: { id: string } | null;
}

/** The site, as Netlify's API gives it; a refused token or an unknown site fails, naming what to do. */
async function site(settings: Record<string, string>, env: NodeJS.ProcessEnv): Promise<Site> {
  const { status, body } = await askApi(
    HOST,
    `${apiBase(env)}/sites/${settings[SITE.name]}`,
    settings[TOKEN.name]!,
  );
  if (status === 401 || status === 403) throw tokenRefused(HOST, TOKEN);
  if (status === 404)
    throw new HostFailure(
      HOST,
      `Netlify knows no project ${settings[SITE.name]} that this token can reach, so nothing was uploaded. ` +
        `Copy NETLIFY_SITE_ID again (${SITE.where}), then run the deploy again.`,
    );
  if (status !== 200)
    throw new HostFailure(HOST, `Netlify's API answered ${status} for the project; try again shortly.`);
  return body as Site;
}

const CLI: HostCli = {
  host: HOST,
  cli: "netlify-cli",
  live: "the deploy published before",
  token: TOKEN,
  refused: /Access Denied|Unauthorized|\b401\b/,
};

export const netlify: Host = {
  name: "netlify",
  cli: NETLIFY_CLI,
  settings: [TOKEN, SITE],

  async address(settings, env) {
    return (await site(settings, env)).ssl_url;
  },

  async upload(dist, settings, env) {
    // Asked first: a refused token or an unknown site is said plainly, and the deploy live now is
    // the one rollback() names.
    const before = await site(settings, env);
    // From an empty folder: no netlify.toml and no linked project of the repository's are read.
    const folder = mkdtempSync(join(tmpdir(), "deploy-netlify-"));
    try {
      const run = await runPinned(
        NETLIFY_CLI,
        ["deploy", "--dir", resolve(dist), "--prod", "--site", settings[SITE.name]!, "--no-build", "--json"],
        {
          cwd: folder,
          // CI: no prompt, and no telemetry (dist/utils/telemetry/telemetry.js, track: none in CI).
          env: { ...env, [TOKEN.name]: settings[TOKEN.name], CI: "true" },
        },
      );
      let deployed: { url?: string } = {};
      try {
        deployed = JSON.parse(run.stdout.slice(run.stdout.indexOf("{"))) as { url?: string };
      } catch {
        // No JSON: the deploy stopped before its end.
      }
      if (run.status !== 0 || !deployed.url) throw cliFailure(run, settings[TOKEN.name]!, CLI);
      return { url: deployed.url, previous: before.published_deploy?.id };
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  },

  rollback(settings, upload) {
    const data = JSON.stringify({
      site_id: settings[SITE.name],
      deploy_id: upload?.previous ?? "<a deploy's id, from Deploys>",
    });
    return `npx --yes ${NETLIFY_CLI} api restoreSiteDeploy --data '${data}'`;
  },
};
