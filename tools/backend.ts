// `npm run backend`: the local Supabase backend on its own, on the Supabase CLI's address,
// with its data in SUPABASE_DATA_DIR (default .data/). Ctrl-C stops it with the data flushed.
import { describeApi, runLocalSupabaseOrExit } from "./run-local-supabase.ts";
import { onShutdown } from "./processes.ts";
import { localSettingsOrExit } from "./settings.ts";

const settings = localSettingsOrExit();
const backend = await runLocalSupabaseOrExit(settings);

console.log(`
${describeApi(settings, backend)}
  Publishable key: ${backend.publishableKey}
  Secret key:      ${backend.secretKey}
`);

onShutdown(() => backend.close());
