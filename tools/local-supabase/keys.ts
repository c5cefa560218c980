// The roles the Supabase CLI's local keys (config/local-supabase.ts) act as, so a site set up for
// `supabase start` works unchanged here.
import { LOCAL_PUBLISHABLE_KEY, LOCAL_SECRET_KEY } from "../../config/local-supabase.ts";

export const SERVICE_ROLE = "service_role";

/** The database role each key acts as, as the CLI's gateway maps them. */
export const KEY_ROLES: ReadonlyMap<string, string> = new Map([
  [LOCAL_PUBLISHABLE_KEY, "anon"],
  [LOCAL_SECRET_KEY, SERVICE_ROLE],
]);
