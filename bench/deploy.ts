// `npm run bench:deploy`: how long `npm run deploy -- --yes` takes from a clone to a checked page,
// step by step, with its settings in the environment and stand-ins for the accounts: a new
// Supabase project on a server of its own (tests/deploy/new-project.ts: its owner's password, the
// local Supabase as its API, started at the first request, after the migrations, as it reads the
// tables once where Supabase's reloads them on every change), Cloudflare's API (tests/deploy/stand-ins/cloudflare-api.ts; wrangler
// is the real one, at the deploy's pin), and the live site served from the version the stand-in
// holds live (stand-ins/cloudflare-site.ts). The
// first run applies every migration and uploads every file; the second, with nothing changed,
// applies nothing and uploads only what the host lacks. Targets: 90 s, then 45 s, most of the
// first the build. The pinned CLIs are fetched into npm's cache before the clock starts.
//
// Prints each step's time and writes them to bench/results/deploy.json. It never fails on them.
import { rmSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { LOCAL_PUBLISHABLE_KEY } from "../config/local-supabase.ts";
import { WRANGLER } from "../tools/deploy/hosts/cloudflare.ts";
import { runNpmScript } from "../tools/npm-script.ts";
import { runPinned } from "../tools/npx.ts";
import { SUPABASE_CLI } from "../tools/supabase-cli.ts";
import { newProject } from "../tests/deploy/new-project.ts";
import { ACCOUNT_ID, API_TOKEN, startCloudflareApi } from "../tests/deploy/stand-ins/cloudflare-api.ts";
import { serveLiveVersion } from "../tests/deploy/stand-ins/cloudflare-site.ts";
import { copyProject } from "../tests/support/project-copy.ts";
import { table, verdict, writeResults } from "./support.ts";

/** A run's steps, as the command names them (`▸ …`) and times them (`done in N s`), and its whole length. */
interface Run {
  status: number | null;
  steps: Array<{ step: string; seconds: number }>;
  seconds: number;
  output: string;
}

const TARGETS = { first: 90, again: 45 };

for (const pkg of [SUPABASE_CLI, WRANGLER]) await runPinned(pkg, ["--version"]);

const copy = copyProject("future-awaits-bench-deploy-");
const project = await newProject(17);
// The project's API: the local Supabase, started at the first request and passed every request.
let api: Promise<URL> | undefined;
const apiProxy = createServer(async (req, res) => {
  api ??= project.startApi().then((started) => new URL(started.url));
  const { hostname, port } = await api;
  const forward = request(
    { hostname, port, path: req.url, method: req.method, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    },
  );
  req.pipe(forward);
});
await new Promise<void>((listening) => apiProxy.listen(0, "127.0.0.1", listening));
const cloudflare = await startCloudflareApi();
const home = join(tmpdir(), `bench-deploy-${process.pid}`);

const site = await serveLiveVersion(cloudflare);

const env = {
  ...project.cliEnv,
  npm_config_cache: process.env.npm_config_cache || join(homedir(), ".npm"),
  XDG_CONFIG_HOME: join(home, ".config"),
  PUBLIC_SUPABASE_URL: `http://127.0.0.1:${(apiProxy.address() as AddressInfo).port}`,
  PUBLIC_SUPABASE_PUBLISHABLE_KEY: LOCAL_PUBLISHABLE_KEY,
  SUPABASE_DB_PUSH_URL: project.dbUrl,
  SITE_URL: site.url,
  CLOUDFLARE_API_TOKEN: API_TOKEN,
  CLOUDFLARE_ACCOUNT_ID: ACCOUNT_ID,
  CLOUDFLARE_API_BASE_URL: `${cloudflare.url}/client/v4`,
  WRANGLER_SEND_METRICS: "false",
};

/** `npm run deploy -- --yes` in the copy, timed; its steps as it names (`▸ …`) and times them. */
async function deploy(): Promise<Run> {
  const started = performance.now();
  const { status, stdout, stderr } = await runNpmScript("deploy", ["--yes"], { cwd: copy, env });
  const seconds = (performance.now() - started) / 1000;
  const names = [...stderr.matchAll(/^▸ (.+)$/gm)].map((match) => match[1]!);
  const times = [...stderr.matchAll(/^ {2}done in ([\d.]+) s$/gm)].map((match) => Number(match[1]));
  const steps = times.map((time, i) => ({ step: names[i]!.replace(/ (at|for|to) .*$/, ""), seconds: time }));
  return { status, steps, seconds, output: `${stdout}${stderr}` };
}

try {
  const first = await deploy();
  const uploadsFirst = cloudflare.uploads.length;
  const again = await deploy();
  for (const run of [first, again]) if (run.status !== 0) console.log(`\nA run failed:\n${run.output}`);

  console.log(`\nnpm run deploy -- --yes, Cloudflare, a new project (PostgreSQL 17)\n`);
  const stepNames = [...new Set([first, again].flatMap((run) => run.steps.map(({ step }) => step)))];
  const cell = (run: Run, step: string) => {
    const found = run.steps.find((entry) => entry.step === step);
    return found ? `${found.seconds.toFixed(1)} s` : "-";
  };
  console.log(
    table(
      ["step", "first deploy", "again, nothing changed"],
      [
        ...stepNames.map((step) => [step, cell(first, step), cell(again, step)]),
        ["whole command", `${first.seconds.toFixed(1)} s`, `${again.seconds.toFixed(1)} s`],
        ["files uploaded", String(uploadsFirst), String(cloudflare.uploads.length - uploadsFirst)],
      ],
    ),
  );
  const reuploaded = cloudflare.uploads.slice(uploadsFirst).map(({ path }) => path);
  if (reuploaded.length > 0)
    console.log(`\nUploaded again (changed by the new build): ${reuploaded.join(", ")}`);
  console.log(
    `\nfirst deploy: ${verdict(first.status === 0 && first.seconds <= TARGETS.first, `≤ ${TARGETS.first} s`)}`,
  );
  console.log(
    `again:        ${verdict(again.status === 0 && again.seconds <= TARGETS.again, `≤ ${TARGETS.again} s`)}`,
  );
  await writeResults("deploy", {
    targets: TARGETS,
    first: { status: first.status, seconds: first.seconds, steps: first.steps, filesUploaded: uploadsFirst },
    again: {
      status: again.status,
      seconds: again.seconds,
      steps: again.steps,
      uploaded: reuploaded,
    },
  });
} finally {
  await site.close();
  await new Promise((closed) => apiProxy.close(closed));
  await cloudflare.close();
  await project.close();
  rmSync(copy, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
