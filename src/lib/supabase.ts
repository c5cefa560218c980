// The one Supabase client of the site (./supabase-client.ts). It is only needed to sign up, so it
// is loaded when a visitor first turns to the form (the form island's beforeHydration), never
// with the page.
import type { SupabaseClient } from "@supabase/supabase-js";
import { PUBLIC_SUPABASE_PUBLISHABLE_KEY, PUBLIC_SUPABASE_URL } from "astro:env/client";

let client: Promise<SupabaseClient> | undefined;

export function getSupabase(): Promise<SupabaseClient> {
  client ??= import("./supabase-client").then(({ createClient }) =>
    createClient(PUBLIC_SUPABASE_URL, PUBLIC_SUPABASE_PUBLISHABLE_KEY),
  );
  // A failed download must not poison later attempts.
  client.catch(() => (client = undefined));
  return client;
}
