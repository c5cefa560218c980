// Cloudflare, the default host: a Worker with static assets and no code of its own, uploaded by
// wrangler. Not Pages: Cloudflare now points new sites at Workers, which read the same `_headers`,
// answer unknown paths with `404.html` and status 404 (`not_found_handling = "404-page"`), and
// keep every version, so that `wrangler rollback` makes the previous one live again (Pages has no
// such command, only the dashboard). Free, at `https://<worker>.<account's subdomain>.workers.dev`.
//
// `wrangler deploy` first asks which files the host lacks (their content hashes), uploads only
// those, and only then creates the version and makes it live: a failure before that leaves the
// previous version live (wrangler@4.168.0, wrangler-dist/cli.js: syncAssets, line 61715, before
// the version's upload, line 70367, and its deployment).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runPinned, type PinnedRun } from "../../npx.ts";
import type { Setting } from "../settings.ts";
import { askApi, cliFailure, HostFailure, tokenRefused, type HostCli } from "./calls.ts";
import type { Host } from "./host.ts";

const HOST = "Cloudflare";
export const WRANGLER = "wrangler@4.168.0";

const TOKEN: Setting = {
  name: "CLOUDFLARE_API_TOKEN",
  secret: true,
  where:
    "dash.cloudflare.com → My Profile → API Tokens → Create Token → template “Edit Cloudflare Workers” " +
    "(Account: Workers Scripts Edit, Account Settings Read)",
};
const ACCOUNT: Setting = {
  name: "CLOUDFLARE_ACCOUNT_ID",
  secret: false,
  where: "dash.cloudflare.com → Workers & Pages → Account ID, at the right",
  refuse: (value) =>
    /^[0-9a-f]{32}$/.test(value)
      ? null
      : "an account ID is 32 hexadecimal characters, as the dashboard shows it.",
};
const WORKER: Setting = {
  name: "CLOUDFLARE_WORKER_NAME",
  secret: false,
  where: "the Worker's name, made on the first deploy: the first part of its address",
  default: "future-awaits",
  refuse: (value) =>
    /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(value)
      ? null
      : "a Worker's name is lower-case letters, digits and dashes, 63 at most, a dash neither first nor last.",
};

/** The API wrangler calls, unless CLOUDFLARE_API_BASE_URL names another (the tests' stand-in). */
const apiBase = (env: NodeJS.ProcessEnv) =>
  env.CLOUDFLARE_API_BASE_URL ?? "https://api.cloudflare.com/client/v4";

/**
 * The Worker as wrangler reads it (wrangler.json): `dist` served as static assets, with no code,
 * `404.html` for unknown paths with status 404. The tests' local server (`wrangler dev`) reads the
 * same. The compatibility date is fixed, so that a deploy does not change how the Worker runs.
 */
export function workerConfig(dist: string, name: string): object {
  return {
    name,
    compatibility_date: "2026-11-01",
    assets: {
      directory: resolve(dist),
      not_found_handling: "404-page",
      html_handling: "auto-trailing-slash",
    },
    workers_dev: true,
  };
}

/**
 * `wrangler deploy` of `dist`, from a folder of its own holding the Worker's configuration: what
 * it printed, and the output file it writes for programs (one JSON line per step).
 */
async function wranglerDeploy(dist: string, settings: Record<string, string>, env: NodeJS.ProcessEnv) {
  const folder = mkdtempSync(join(tmpdir(), "deploy-cloudflare-"));
  try {
    const config = join(folder, "wrangler.json");
    writeFileSync(config, JSON.stringify(workerConfig(dist, settings[WORKER.name]!)));
    const output = join(folder, "output.json");
    const run = await runPinned(WRANGLER, ["deploy", "--config", config], {
      cwd: folder,
      env: {
        ...env,
        [TOKEN.name]: settings[TOKEN.name],
        [ACCOUNT.name]: settings[ACCOUNT.name],
        // Its telemetry off (wrangler-dist/cli.js, line 10009); its output file, for us to read.
        WRANGLER_SEND_METRICS: "false",
        WRANGLER_OUTPUT_FILE_PATH: output,
      },
    });
    let written = "";
    try {
      written = readFileSync(output, "utf8");
    } catch {
      // No output file: wrangler stopped before the end of its command.
    }
    return { run, written };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const WRANGLER_CLI: HostCli = {
  host: HOST,
  cli: "wrangler",
  live: "the version live before",
  token: TOKEN,
  refused: /\[code: 10000\]|Authentication error/,
};

/** What a failed `wrangler deploy` means for the owner, from the API's error code it printed. */
function failure(run: PinnedRun, settings: Record<string, string>): HostFailure {
  if (/\[code: 7003\]|\[code: 9109\]/.test(`${run.stdout}\n${run.stderr}`))
    return new HostFailure(
      HOST,
      `Cloudflare knows no account ${settings[ACCOUNT.name]} that this token can reach. Nothing was uploaded. ` +
        `Copy CLOUDFLARE_ACCOUNT_ID again (${ACCOUNT.where}), or make the token on that account, and run the deploy again.`,
    );
  return cliFailure(run, settings[TOKEN.name]!, WRANGLER_CLI);
}

export const cloudflare: Host = {
  name: "cloudflare",
  cli: WRANGLER,
  settings: [TOKEN, ACCOUNT, WORKER],

  async address(settings, env) {
    const account = settings[ACCOUNT.name]!;
    const { status, body } = await askApi(
      HOST,
      `${apiBase(env)}/accounts/${account}/workers/subdomain`,
      settings[TOKEN.name]!,
    );
    const subdomain = (body as { result?: { subdomain?: string } } | null)?.result?.subdomain;
    if (status === 401 || status === 403) throw tokenRefused(HOST, TOKEN);
    if (status === 200 && subdomain) return `https://${settings[WORKER.name]}.${subdomain}.workers.dev`;
    if (status === 404 && JSON.stringify(body).includes("10007"))
      throw new HostFailure(
        HOST,
        "This Cloudflare account has no workers.dev subdomain yet, so a Worker there has no address. " +
          "Open dash.cloudflare.com → Workers & Pages once, which asks for one, then run the deploy again.",
      );
    throw new HostFailure(
      HOST,
      `Cloudflare's API answered ${status} when asked for account ${account}'s workers.dev subdomain. ` +
        `Check CLOUDFLARE_ACCOUNT_ID (${ACCOUNT.where}), then run the deploy again.`,
    );
  },

  async upload(dist, settings, env) {
    const { run, written } = await wranglerDeploy(dist, settings, env);
    const deploy = written
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type?: string; targets?: string[] })
      .find((entry) => entry.type === "deploy");
    const url = deploy?.targets?.find((target) => target.endsWith(".workers.dev"));
    if (run.status !== 0 || !url) throw failure(run, settings);
    return { url };
  },

  rollback(settings) {
    return `CLOUDFLARE_ACCOUNT_ID=${settings[ACCOUNT.name]} npx --yes ${WRANGLER} rollback --name ${settings[WORKER.name]}`;
  },
};
