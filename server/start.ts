// `npm start`: build the site, then serve it as a static host would, with the embedded
// Supabase backend beside it unless the site is configured for a real Supabase project.
import { createServer } from "node:http";
import { resolve } from "node:path";
import { startBackend, type Backend } from "./backend/index.ts";
import { DATA_DIR, SITE_PORT, usesLocalBackend } from "./config.ts";
import { astro, exited, onShutdown } from "./processes.ts";
import { createStaticHost } from "./static-host.ts";

if (!process.argv.includes("--no-build")) {
  const code = await exited(astro("build"));
  if (code !== 0) process.exit(code);
}

const backend: Backend | null = usesLocalBackend() ? await startBackend({ dataDir: DATA_DIR }) : null;

const host = createStaticHost({ root: resolve("dist") });
const site = createServer(async (req, res) => {
  const started = performance.now();
  const status = await host(req, res);
  console.log(`site ${req.method} ${req.url} ${status} ${(performance.now() - started).toFixed(1)}ms`);
});
site.listen(SITE_PORT, () => {
  console.log(`\n  Site:  http://localhost:${SITE_PORT}`);
  if (backend) {
    console.log(`  API:   ${backend.url}  (embedded Supabase backend)`);
    console.log(`  Data:  ${resolve(DATA_DIR)}\n`);
  } else {
    console.log(`  API:   ${process.env.PUBLIC_SUPABASE_URL}  (configured Supabase project)\n`);
  }
});

onShutdown(async () => {
  await new Promise((done) => site.close(done));
  await backend?.close();
});
