// `npm run dev`: Astro's dev server, with the embedded Supabase backend beside it unless the
// site is configured for a real Supabase project.
import { resolve } from "node:path";
import { startBackend } from "./backend/index.ts";
import { DATA_DIR, usesLocalBackend } from "./config.ts";
import { astro, exited, onShutdown } from "./processes.ts";

const backend = usesLocalBackend() ? await startBackend({ dataDir: DATA_DIR }) : null;
if (backend) console.log(`\n  API:   ${backend.url}  (embedded Supabase backend)\n  Data:  ${resolve(DATA_DIR)}\n`);

const dev = astro("dev", ...process.argv.slice(2));
onShutdown(async () => {
  dev.kill("SIGTERM");
  await exited(dev);
  await backend?.close();
});
const code = await exited(dev);
await backend?.close();
process.exit(code);
