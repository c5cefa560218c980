// `npm run dev`: Astro's dev server, with the local Supabase backend beside it unless the
// site is configured for a real Supabase project.
import { describeApi, runLocalSupabaseOrExit } from "./run-local-supabase.ts";
import { astro, exited, onShutdown } from "./processes.ts";
import { localSettingsOrExit } from "./settings.ts";

const settings = localSettingsOrExit();
const backend = settings.usesLocalSupabase ? await runLocalSupabaseOrExit(settings) : null;
console.log(`\n${describeApi(settings, backend)}\n`);

const dev = astro("dev", ...process.argv.slice(2));
onShutdown(async () => {
  dev.kill("SIGTERM");
  await exited(dev);
  await backend?.close();
});
const code = await exited(dev);
await backend?.close();
process.exit(code);
