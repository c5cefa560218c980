// `npm start`: build the site, then serve it as a static host would, with the embedded
// Supabase backend beside it unless the site is configured for a real Supabase project.
import { createServer } from "node:http";
import { resolve } from "node:path";
import { describeApi, SITE_PORT, startLocalBackend } from "./config.ts";
import { astro, exited, onShutdown } from "./processes.ts";
import { createStaticHost } from "./static-host.ts";

// The backend first: a second `npm start` stops here, before building over the first one's site.
const backend = await startLocalBackend();

const host = createStaticHost({ root: resolve("dist") });
const site = createServer(async (req, res) => {
  const started = performance.now();
  const status = await host(req, res);
  console.log(`site ${req.method} ${req.url} ${status} ${(performance.now() - started).toFixed(1)}ms`);
});

onShutdown(async () => {
  const closed = new Promise((done) => (site.listening ? site.close(done) : done(undefined)));
  site.closeAllConnections();
  await closed;
  await backend?.close();
});

if (!process.argv.includes("--no-build")) {
  const code = await exited(astro("build"));
  if (code !== 0) {
    await backend?.close();
    process.exit(code);
  }
}

site.listen(SITE_PORT, () => {
  console.log(`\n  Site:  http://localhost:${SITE_PORT}\n${describeApi(backend)}\n`);
});
