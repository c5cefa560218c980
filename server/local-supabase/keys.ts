// The Supabase CLI's standard local-development keys (`supabase status` prints the same ones,
// supabase/cli pkg/config/apikeys.go), so a site configured for `supabase start` works unchanged
// against the local backend. They are public knowledge: never use them for a deployed project.
// The publishable key, which the site's build uses too, is the site's own (src/local-supabase.ts).
import { LOCAL_PUBLISHABLE_KEY } from "../../src/local-supabase.ts";

export const LOCAL_JWT_SECRET = "super-secret-jwt-token-with-at-least-32-characters-long";

/** Today's opaque server key; acts as `service_role`. */
export const LOCAL_SECRET_KEY = "sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz";

/** Legacy HS256 JWT with `role: anon`, expiring in 2032. */
export const LOCAL_ANON_KEY =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0";

/** Legacy HS256 JWT with `role: service_role`, expiring in 2032. */
export const LOCAL_SERVICE_ROLE_KEY =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0.EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU";

/**
 * What the CLI's gateway puts in `Authorization` for an opaque key (its kong.yml template):
 * the legacy JWT of the same role, which PostgREST then verifies as usual.
 */
export const LOCAL_OPAQUE_KEYS: ReadonlyMap<string, string> = new Map([
  [LOCAL_PUBLISHABLE_KEY, LOCAL_ANON_KEY],
  [LOCAL_SECRET_KEY, LOCAL_SERVICE_ROLE_KEY],
]);
