// `npm run deploy`: from a clone to a live, checked page, on the owner's Supabase project and host.
// In order, each step only once the one before it has passed:
//   1. the settings (settings.ts), asked for on a terminal, else every missing one named at once;
//   2. the project: the migrations it lacks listed, applied after a yes (migrations.ts), and the
//      page's sign-up path tried (supabase.ts);
//   3. the build for that project (build.ts);
//   4. the upload with the host's own CLI (hosts/), or, with `--host none`, what to upload;
//   5. the live site and project checked from the outside (checks.ts).
// `--check` runs step 5 alone; `--github` sets up the repository's workflows (github.ts).
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { OwnerFailure } from "../../config/owner-failure.ts";
import { buildSite } from "./build.ts";
import { checkLive, describeVerdict } from "./checks.ts";
import { setUpGitHub } from "./github.ts";
import { HOSTS, type Host } from "./hosts/index.ts";
import { givenSettings, resolveSettings, type Asker, type Setting } from "./settings.ts";
import { pendingMigrations, pushMigrations } from "./migrations.ts";
import { checkPagePath, fetchPublishableKey, refusePublishableKey } from "./supabase.ts";
import { terminal } from "./terminal.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

const USAGE = `npm run deploy -- [--host cloudflare|netlify|vercel|none] [--yes] [--check] [--github]

  (no option)   the project's migrations, the build, the upload to Cloudflare, the checks
  --host NAME   the host to upload to (cloudflare, the default; netlify; vercel); none: build, and say what to upload
  --yes         ask nothing: apply the migrations the project lacks; fail naming any missing setting
  --check       only check the live site (SITE_URL) and project from the outside, changing nothing
  --github      set up this repository's GitHub workflows: their secrets, variables and environment

Settings come from the environment, then .env.deploy, then .env; on a terminal, each missing one is asked for.`;

/** An https URL, or a local one (the tests' and `npm start`'s). */
const refuseUrl = (value: string) => {
  try {
    return ["https:", "http:"].includes(new URL(value).protocol) ? null : "not an http(s) address.";
  } catch {
    return "not an address such as https://example.com.";
  }
};

const SITE: Setting = {
  name: "SITE_URL",
  secret: false,
  where: "the site's public address, such as https://example.com",
  refuse: refuseUrl,
};
const PROJECT_URL: Setting = {
  name: "PUBLIC_SUPABASE_URL",
  secret: false,
  where: "https://<project-ref>.supabase.co: the dashboard's Project Settings → Data API → Project URL",
  refuse: refuseUrl,
};
const PUBLISHABLE_KEY: Setting = {
  name: "PUBLIC_SUPABASE_PUBLISHABLE_KEY",
  secret: false,
  where:
    "sb_publishable_…: Project Settings → API Keys → Publishable key; or give SUPABASE_PROJECT_REF and " +
    "SUPABASE_ACCESS_TOKEN (supabase.com/dashboard/account/tokens), which fetch it",
  refuse: refusePublishableKey,
};
const DB_PUSH_URL: Setting = {
  name: "SUPABASE_DB_PUSH_URL",
  secret: true,
  where: "the dashboard's Connect → Session pooler connection string, with the database's password",
  refuse: (value) => (/^postgres(ql)?:\/\//.test(value) ? null : "not a postgresql:// connection string."),
};

/** The given settings, with what a Supabase access token and project ref fetch in place of asking. */
async function withFetchedKeys(
  given: Record<string, string>,
  env: NodeJS.ProcessEnv,
): Promise<Record<string, string>> {
  const ref = given.SUPABASE_PROJECT_REF;
  if (!ref || !given.SUPABASE_ACCESS_TOKEN) return given;
  const settings: Record<string, string> = { PUBLIC_SUPABASE_URL: `https://${ref}.supabase.co`, ...given };
  settings.PUBLIC_SUPABASE_PUBLISHABLE_KEY ??= await fetchPublishableKey(ROOT, ref, {
    ...env,
    SUPABASE_ACCESS_TOKEN: given.SUPABASE_ACCESS_TOKEN,
  });
  return settings;
}

/** `label`'s step, timed, said on stderr. */
async function step<T>(label: string, run: () => Promise<T> | T): Promise<T> {
  const started = performance.now();
  process.stderr.write(`\n▸ ${label}\n`);
  const result = await run();
  process.stderr.write(`  done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  return result;
}

/** Whether to apply `pending`: `--yes`, or the owner's yes on the terminal. */
async function approved(
  pending: string[],
  yes: boolean,
  asker: typeof terminal | undefined,
): Promise<boolean> {
  if (yes) return true;
  if (!asker)
    throw new OwnerFailure(
      `The project lacks ${pending.length} migration(s), and there is no terminal to ask: run again with --yes to apply them.`,
      "Migrations not approved",
    );
  return asker.confirm(
    `Apply ${pending.length === 1 ? "this migration" : `these ${pending.length} migrations`}?`,
  );
}

async function deploy(host: Host | null, yes: boolean, asker: typeof terminal | undefined): Promise<void> {
  const env = process.env;
  const given = await withFetchedKeys(givenSettings(ROOT), env);
  // A host gives the site an address of its own: SITE_URL is asked for only without one.
  const site = host && !given.SITE_URL ? [] : [SITE];
  const wanted = [PROJECT_URL, PUBLISHABLE_KEY, DB_PUSH_URL, ...(host?.settings ?? []), ...site];
  const settings = await resolveSettings(wanted, given, { root: ROOT, asker });
  const siteUrl = settings.SITE_URL ?? (await host!.address(settings, env));
  const supabaseUrl = settings.PUBLIC_SUPABASE_URL!;
  const publishableKey = settings.PUBLIC_SUPABASE_PUBLISHABLE_KEY!;
  const dbUrl = settings.SUPABASE_DB_PUSH_URL!;

  await step(`The project at ${supabaseUrl}`, async () => {
    const pending = await pendingMigrations(ROOT, dbUrl, env);
    process.stderr.write(
      pending.length === 0
        ? "  It has every migration of the repository.\n"
        : `  It lacks:\n${pending.map((file) => `    ${file}\n`).join("")}`,
    );
    if (pending.length > 0) {
      if (!(await approved(pending, yes, asker)))
        throw new OwnerFailure("Nothing applied, nothing uploaded.", "Migrations not approved");
      await pushMigrations(ROOT, dbUrl, env);
      process.stderr.write(`  Applied ${pending.length}.\n`);
    }
    await checkPagePath(supabaseUrl, publishableKey);
    process.stderr.write("  The page's sign-up path answers as it must.\n");
  });

  const dist = join(ROOT, "dist");
  await step(`The build for ${siteUrl}`, () =>
    buildSite(ROOT, dist, { supabaseUrl, publishableKey, siteUrl }, () => {}),
  );

  if (!host) {
    process.stdout.write(
      `\nBuilt into ${dist} for ${supabaseUrl}. Upload the folder whole to the host of ${siteUrl}, then set:\n` +
        "  - unknown paths answered with 404.html and status 404;\n" +
        "  - the headers of dist/_headers (deploy/README.md has each host's way);\n" +
        "Then check it from the outside: npm run deploy -- --check\n",
    );
    return;
  }
  const upload = await step(`The upload to ${host.name}`, () => host.upload(dist, settings, env));
  const verdict = await step(`The live site at ${siteUrl}`, () =>
    checkLive(ROOT, { siteUrl, supabaseUrl, publishableKey, dbUrl }, env),
  );
  process.stdout.write(`\n${describeVerdict(verdict, host.rollback(settings, upload))}`);
  if (verdict.failures.length > 0) process.exit(1);
  process.stdout.write(
    `\nLive: ${siteUrl}${upload.url === siteUrl ? "" : ` (this version: ${upload.url})`}\n`,
  );
}

async function check(asker: Asker | undefined): Promise<void> {
  const given = givenSettings(ROOT);
  const settings = await resolveSettings([SITE, PROJECT_URL, PUBLISHABLE_KEY], given, { root: ROOT, asker });
  const verdict = await checkLive(
    ROOT,
    {
      siteUrl: settings.SITE_URL!,
      supabaseUrl: settings.PUBLIC_SUPABASE_URL!,
      publishableKey: settings.PUBLIC_SUPABASE_PUBLISHABLE_KEY!,
      dbUrl: given.SUPABASE_DB_PUSH_URL,
    },
    process.env,
  );
  process.stdout.write(describeVerdict(verdict));
  if (verdict.failures.length > 0) process.exit(1);
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      host: { type: "string", default: "cloudflare" },
      yes: { type: "boolean", default: false },
      check: { type: "boolean", default: false },
      github: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const asker = process.stdin.isTTY && !values.yes ? terminal : undefined;
  const host = values.host === "none" ? null : HOSTS[values.host];
  try {
    if (values.github)
      await setUpGitHub({
        root: ROOT,
        given: givenSettings(ROOT),
        asker,
        env: process.env,
        out: (line) => process.stderr.write(`${line}\n`),
      });
    else if (values.check) await check(asker);
    else if (host === undefined)
      throw new OwnerFailure(
        `--host ${values.host}: not a host this command uploads to (${[...Object.keys(HOSTS), "none"].join(", ")}).`,
        "Unknown host",
      );
    else await deploy(host, values.yes, asker);
  } catch (error) {
    if (!(error instanceof OwnerFailure)) throw error;
    process.stderr.write(`\n✗ ${error.title}: ${error.message}\n`);
    process.exit(1);
  }
}
