// The Supabase CLI's local stack as `supabase start` runs it: its API port and its publishable
// key. The site's build uses them when nothing else is configured, so the same build works
// against `supabase start` and against the local backend `npm start` runs (server/local-supabase/).
// The key is public knowledge: never use it for a deployed project.

/** The local stack's API port. */
export const LOCAL_API_PORT = 54321;

/** The local stack's publishable key (today's opaque public key); acts as `anon`. */
export const LOCAL_PUBLISHABLE_KEY = "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH";
