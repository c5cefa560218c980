// The Supabase CLI's standard local-development secret and keys (`supabase status` prints the
// same ones), so a site configured for `supabase start` works unchanged against the embedded
// backend. They are public knowledge: never use them for a deployed project.

export const LOCAL_JWT_SECRET = "super-secret-jwt-token-with-at-least-32-characters-long";

/** HS256 JWT with `role: anon`, expiring in 2032. */
export const LOCAL_ANON_KEY =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0";

/** HS256 JWT with `role: service_role`, expiring in 2032. */
export const LOCAL_SERVICE_ROLE_KEY =
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0.EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU";
