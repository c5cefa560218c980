// `npm run backend`: the embedded Supabase backend on its own, on the Supabase CLI's address,
// with its data in SUPABASE_DATA_DIR (default .data/). Ctrl-C stops it with the data flushed.
import { describeApi, startEmbeddedBackend } from "./config.ts";
import { onShutdown } from "./processes.ts";

const backend = await startEmbeddedBackend();

console.log(`
${describeApi(backend)}
  Publishable key:           ${backend.publishableKey}
  Secret key:                ${backend.secretKey}
  anon key (legacy):         ${backend.anonKey}
  service_role key (legacy): ${backend.serviceRoleKey}
`);

onShutdown(() => backend.close());
