// The Supabase CLI's local stack as `supabase start` runs it (and `supabase status` prints it):
// its API port and its keys. The site's build uses the port and the publishable key when nothing
// else is configured, so the same build works against `supabase start` and against the local
// Supabase `npm start` runs (tools/local-supabase/); the tools use the secret key. Public
// knowledge: never use them for a deployed project.

/** The local stack's API port. */
export const LOCAL_API_PORT = 54321;

/** The local stack's publishable key (today's opaque public key); acts as `anon`. */
export const LOCAL_PUBLISHABLE_KEY = "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH";

/** The local stack's secret key (today's opaque server key); acts as `service_role`. */
export const LOCAL_SECRET_KEY = "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz";
