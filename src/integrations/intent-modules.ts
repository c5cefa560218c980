// The modules a quick sign-up waits for beyond those client:form loads itself: the imports of the
// form's island module and of its renderer (React's), and the Supabase client with its imports. The
// browser would discover them one round trip after another (the island and the renderer, then
// their imports, then the Supabase client once the island asks for it); named in the page, client:form
// preloads them all at the visitor's first sign of intent, side by side.
// Their names carry content hashes that exist only once Vite has bundled the client, which is
// after the pages are rendered: the island's directive value holds INTENT_MODULES, and the
// build's last step writes the names in its place, starting from the island's own component-url
// and renderer-url in the page. (`npm run dev` keeps the placeholder, which client:form ignores.)
import type { AstroIntegration } from "astro";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** What the page holds until the build writes the modules' addresses in. */
export const INTENT_MODULES = "__intent_modules__";

/** The module a sign-up loads when the visitor turns to the form (src/lib/supabase.ts). */
const SUPABASE_CLIENT = "src/lib/supabase-client.ts";

/** What the build's last step needs to know of the client build. */
export interface ClientChunks {
  /** Each chunk's static imports, by file name (`_astro/client.1.js`). */
  imports: Map<string, string[]>;
  /** The file name of the Supabase client's chunk. */
  supabase: string;
}

const ISLAND_TAG = /<astro-island\b(?:[^>"']|"[^"]*"|'[^']*')*>/g;

/**
 * The page with INTENT_MODULES, in each island's tag that holds it, replaced by the addresses
 * to preload: the imports of the island's module and of its renderer, and the Supabase client's
 * chunk with its imports, once each.
 */
export function fillIntentModules(html: string, chunks: ClientChunks, base: string): string {
  const importsOf = (file: string) => {
    const imports = chunks.imports.get(file);
    if (!imports) throw new Error(`intent-modules: ${file} is not a chunk of the client build.`);
    return imports;
  };
  return html.replace(ISLAND_TAG, (tag) => {
    if (!tag.includes(INTENT_MODULES)) return tag;
    const island = ["component-url", "renderer-url"].map((name) => {
      const url = new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
      if (!url?.startsWith(base)) throw new Error(`intent-modules: an island without its ${name}.`);
      return url.slice(base.length);
    });
    const files = [...island.flatMap(importsOf), chunks.supabase, ...importsOf(chunks.supabase)];
    const addresses = [...new Set(files)].map((file) => base + file).join(" ");
    return tag.replaceAll(INTENT_MODULES, addresses);
  });
}

export default function intentModules(): AstroIntegration {
  let chunks: ClientChunks | undefined;
  let base = "/";
  let supabaseClient = "";
  return {
    name: "intent-modules",
    hooks: {
      "astro:config:setup": ({ config, updateConfig }) => {
        base = config.base.endsWith("/") ? config.base : `${config.base}/`;
        supabaseClient = fileURLToPath(new URL(SUPABASE_CLIENT, config.root));
        updateConfig({
          vite: {
            plugins: [
              {
                name: "intent-modules",
                applyToEnvironment: (environment) => environment.name === "client",
                async generateBundle(_, bundle) {
                  const built = Object.values(bundle).filter((file) => file.type === "chunk");
                  const supabase = built.find((chunk) => chunk.facadeModuleId === supabaseClient);
                  if (!supabase)
                    throw new Error(`intent-modules: no chunk for ${SUPABASE_CLIENT} in the client build.`);
                  chunks = {
                    imports: new Map(built.map((chunk) => [chunk.fileName, chunk.imports])),
                    supabase: supabase.fileName,
                  };
                },
              },
            ],
          },
        });
      },
      "astro:build:done": ({ dir }) => {
        if (!chunks) return;
        const root = fileURLToPath(dir);
        for (const page of readdirSync(root, { recursive: true, encoding: "utf8" })) {
          if (!page.endsWith(".html")) continue;
          const html = readFileSync(join(root, page), "utf8");
          if (html.includes(INTENT_MODULES))
            writeFileSync(join(root, page), fillIntentModules(html, chunks, base));
        }
      },
    },
  };
}
