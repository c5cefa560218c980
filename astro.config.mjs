// @ts-check
import { defineConfig, envField } from "astro/config";
import react from "@astrojs/react";
import tailwindcss from "@tailwindcss/vite";

// The local defaults are the Supabase CLI's, so a build works against `supabase start`
// and against the embedded backend (`server/`) without any configuration.
const LOCAL_SUPABASE_URL = "http://127.0.0.1:54321";
const LOCAL_SUPABASE_PUBLISHABLE_KEY = "sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH";

export default defineConfig({
  site: process.env.SITE_URL ?? "http://localhost:4321",
  integrations: [react()],
  vite: {
    plugins: [tailwindcss()],
  },
  env: {
    schema: {
      PUBLIC_SUPABASE_URL: envField.string({
        context: "client",
        access: "public",
        url: true,
        default: LOCAL_SUPABASE_URL,
      }),
      // A publishable key (sb_publishable_…) or, on projects that still have one, the legacy
      // anon JWT: both act as the `anon` role.
      PUBLIC_SUPABASE_PUBLISHABLE_KEY: envField.string({
        context: "client",
        access: "public",
        default: LOCAL_SUPABASE_PUBLISHABLE_KEY,
      }),
    },
  },
});
