// The Supabase client the sign-up sends with: supabase-js's own `createClient`, its session kept
// in the browser's local storage and its token refreshed automatically. No screen signs anyone
// in, so there is never a session to keep: every request carries the project's key, as the role
// `anon`. The session's two settings are supabase-js's defaults, written out so that an upgrade
// that changed them could not change the page unnoticed (tests/site/supabase-client.test.ts).
import { createClient as createSupabaseClient, type SupabaseClient } from "@supabase/supabase-js";

export function createClient(projectUrl: string, key: string): SupabaseClient {
  return createSupabaseClient(projectUrl, key, {
    auth: {
      // In `localStorage`, supabase-js's storage wherever the browser lets a page use it.
      persistSession: true,
      autoRefreshToken: true,
      // No sign-in ever sends a visitor back here: a token in the page's address (a link crafted
      // to carry one) must not sign the visitor in as someone else, whose role every sign-up from
      // that browser would then be sent with.
      detectSessionInUrl: false,
    },
  });
}
