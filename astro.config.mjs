// @ts-check
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { defineConfig, envField } from "astro/config";
import react from "@astrojs/react";
import tailwindcss from "@tailwindcss/vite";
import intentModules from "./src/integrations/intent-modules.ts";
import {
  readEnvironment,
  refuseSecretKeysInPublicVariables,
  siteUrl,
  supabaseUrl,
} from "./config/environment.ts";
import { LOCAL_PUBLISHABLE_KEY } from "./config/local-supabase.ts";

/** The environment as astro:env reads it: the process's own variables, then `.env` files. */
const env = readEnvironment();

// PUBLIC_ variables end up in the pages: a secret key there would hand the list to anyone.
refuseSecretKeysInPublicVariables(env);

// The local defaults are the Supabase CLI's (config/local-supabase.ts), so a build works against
// `supabase start` and against the local Supabase `npm start` runs without any configuration; the
// URL follows SUPABASE_API_PORT, where `npm start` runs that backend.
const SUPABASE_URL = supabaseUrl(env);

/** Where the page may send sign-ups. */
const supabaseOrigin = new URL(SUPABASE_URL).origin;

/**
 * sonner injects its stylesheet at run time, as a <style> element holding the text it passes to
 * its `__insertCSS`. The CSP allows exactly that text, read from the installed sonner, so an
 * upgrade that changes it cannot slip past the policy unnoticed.
 */
function sonnerStyleHash() {
  const source = readFileSync(createRequire(import.meta.url).resolve("sonner"), "utf8");
  const injected = [...source.matchAll(/__insertCSS\(("(?:[^"\\]|\\.)*")\)/g)];
  if (injected.length !== 1) {
    throw new Error(`sonner injects ${injected.length} stylesheets, not 1: update sonnerStyleHash().`);
  }
  const css = JSON.parse(/** @type {string} */ (injected[0]?.[1]));
  return /** @type {const} */ (`sha256-${createHash("sha256").update(css).digest("base64")}`);
}

/**
 * The site's public address (`site`): SITE_URL, which a build for a Supabase project elsewhere
 * must be given (config/environment.ts says so and stops it); a hook, to know it is a build.
 */
/** @type {import("astro").AstroIntegration} */
const siteAddress = {
  name: "site-address",
  hooks: {
    "astro:config:setup": ({ command, updateConfig }) => {
      updateConfig({ site: siteUrl(env, { building: command === "build" }) });
    },
  },
};

/** The site's own client directives, `client:painted` and `client:form` (src/directives/). */
/** @type {import("astro").AstroIntegration} */
const clientDirectives = {
  name: "client-directives",
  hooks: {
    "astro:config:setup": ({ addClientDirective }) => {
      addClientDirective({ name: "painted", entrypoint: "./src/directives/painted.ts" });
      addClientDirective({ name: "form", entrypoint: "./src/directives/form.ts" });
    },
  },
};

/**
 * The browser's own dynamic imports, without Vite's preload helper around them (1.4 KB, 0.1 KB
 * compressed, in the form's module, run before any interaction): what a sign-up needs is
 * preloaded by client:form (src/integrations/intent-modules.ts), and the toasts are not on a
 * sign-up's path. Astro sets the client's build options itself, so this hook, which runs after,
 * is the one place to say it.
 * @type {import("vite").Plugin}
 */
const noPreloadHelper = {
  name: "no-preload-helper",
  configEnvironment: (name) => (name === "client" ? { build: { modulePreload: false } } : undefined),
};

export default defineConfig({
  integrations: [siteAddress, react(), clientDirectives, intentModules()],
  vite: {
    plugins: [tailwindcss(), noPreloadHelper],
  },
  // No Markdown here; Shiki's inline styles would not pass the CSP (and Astro warns about them).
  markdown: { syntaxHighlight: false },
  security: {
    // A <meta> CSP on every page. Astro adds 'self' and the hashes of the inline scripts and
    // styles it writes (island bootstrap, client directives) to script-src and style-src.
    csp: {
      directives: [
        "default-src 'none'",
        "img-src 'self'",
        `connect-src 'self' ${supabaseOrigin}`,
        "base-uri 'none'",
        // The form is only ever sent by its island: a native submit (before hydration, without
        // JavaScript) goes nowhere rather than putting the fields in a URL.
        "form-action 'none'",
      ],
      styleDirective: { hashes: [sonnerStyleHash()] },
    },
  },
  env: {
    schema: {
      PUBLIC_SUPABASE_URL: envField.string({
        context: "client",
        access: "public",
        url: true,
        default: SUPABASE_URL,
      }),
      // A publishable key (sb_publishable_…) or, on projects that still have one, the legacy
      // anon JWT: both act as the `anon` role.
      PUBLIC_SUPABASE_PUBLISHABLE_KEY: envField.string({
        context: "client",
        access: "public",
        default: LOCAL_PUBLISHABLE_KEY,
      }),
      // Whether the build is for the site's public address (robots.txt and sitemap.xml say so);
      // its value is checked by siteUrl() above.
      SITE_URL: envField.string({ context: "server", access: "public", optional: true }),
    },
  },
});
