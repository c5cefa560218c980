// `npm run dev`: Astro's dev server, with the embedded Supabase backend beside it unless the
// site is configured for a real Supabase project.
import { describeApi, startLocalBackend } from "./config.ts";
import { astro, exited, onShutdown } from "./processes.ts";

const backend = await startLocalBackend();
console.log(`\n${describeApi(backend)}\n`);

const dev = astro("dev", ...process.argv.slice(2));
onShutdown(async () => {
  dev.kill("SIGTERM");
  await exited(dev);
  await backend?.close();
});
const code = await exited(dev);
await backend?.close();
process.exit(code);
