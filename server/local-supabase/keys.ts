// The Supabase CLI's local keys (as `supabase status` prints them), so a site set up for `supabase
// start` works unchanged here. Public knowledge: never use them for a deployed project. The
// publishable key, which the site's build uses too, is the site's own (src/local-supabase.ts).
import { LOCAL_PUBLISHABLE_KEY } from "../../src/local-supabase.ts";

/** The opaque server key: every row, past every policy. */
export const LOCAL_SECRET_KEY = "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz";

export const SERVICE_ROLE = "service_role";

/** The database role each key acts as, as the CLI's gateway maps them. */
export const KEY_ROLES: ReadonlyMap<string, string> = new Map([
  [LOCAL_PUBLISHABLE_KEY, "anon"],
  [LOCAL_SECRET_KEY, SERVICE_ROLE],
]);
