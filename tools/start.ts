// `npm start`: build the site, then serve it as a static host would, with the local
// Supabase backend beside it unless the site is configured for a real Supabase project.
// `--no-build` serves the existing build (`npm run preview`); `--dist <folder>` builds into and
// serves another folder than dist/ (the tests' own).
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { describeApi, runLocalSupabaseOrExit } from "./run-local-supabase.ts";
import { astro, exited, onShutdown } from "./processes.ts";
import { localSettingsOrExit } from "./settings.ts";
import { createStaticHost } from "./static-host/static-host.ts";

const { values: options } = parseArgs({
  options: { "no-build": { type: "boolean", default: false }, dist: { type: "string", default: "dist" } },
});
const dist = resolve(options.dist);

// Serving no build would answer every path "Not found": say what to run instead.
if (options["no-build"] && !existsSync(join(dist, "index.html"))) {
  console.error(`\n  No build in ${dist}: run \`npm run build\` first, or \`npm start\`, which builds.\n`);
  process.exit(1);
}

const settings = localSettingsOrExit();
const { sitePort: SITE_PORT, siteHost: SITE_HOST } = settings;

// The backend first: a second `npm start` stops here, before building over the first one's site.
const backend = settings.usesLocalSupabase ? await runLocalSupabaseOrExit(settings) : null;

// The site's port is taken before the build, so that a port in use stops us at once. Requests
// that arrive during the build wait for it.
const host = createStaticHost({ root: dist });
const { promise: built, resolve: buildDone } = Promise.withResolvers<void>();
const site = createServer(async (req, res) => {
  const started = performance.now();
  await built;
  const status = await host(req, res).catch((error: unknown) => {
    console.error(`site ${req.method} ${req.url}: ${error instanceof Error ? error.message : String(error)}`);
    if (!res.headersSent) res.writeHead(500).end();
    return 500;
  });
  console.log(`site ${req.method} ${req.url} ${status} ${(performance.now() - started).toFixed(1)}ms`);
});

onShutdown(async () => {
  const closed = new Promise((done) => (site.listening ? site.close(done) : done(undefined)));
  site.closeAllConnections();
  await closed;
  await backend?.close();
});

await new Promise<void>((listening) => {
  site.once("error", async (error: NodeJS.ErrnoException) => {
    if (error.code !== "EADDRINUSE") throw error;
    console.error(
      `\n  Port ${SITE_PORT} is taken: is another \`npm start\` running? Set PORT for another port.\n`,
    );
    await backend?.close();
    process.exit(1);
  });
  site.listen(SITE_PORT, SITE_HOST, listening);
});

if (!options["no-build"]) {
  const code = await exited(astro("build", "--outDir", dist));
  if (code !== 0) {
    await backend?.close();
    process.exit(code);
  }
}
buildDone();

const shownHost = SITE_HOST === "127.0.0.1" || SITE_HOST === "::1" ? "localhost" : SITE_HOST;
console.log(
  `\n  Site:  http://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${SITE_PORT}\n${describeApi(settings, backend)}\n`,
);
