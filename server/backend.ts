// `npm run backend`: the embedded Supabase backend on its own, on the Supabase CLI's address,
// with its data in SUPABASE_DATA_DIR (default .data/). Ctrl-C stops it with the data flushed.
import { startBackend } from "./backend/index.ts";

const backend = await startBackend({ dataDir: process.env.SUPABASE_DATA_DIR ?? ".data" });

console.log(`
  Embedded Supabase backend
  API URL:          ${backend.url}
  anon key:         ${backend.anonKey}
  service_role key: ${backend.serviceRoleKey}
  Data:             ${backend.dataDir ?? "in memory"}
`);

async function shutDown() {
  await backend.close();
  process.exit(0);
}
process.once("SIGINT", shutDown);
process.once("SIGTERM", shutDown);
