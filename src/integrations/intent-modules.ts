// The modules a quick sign-up waits for beyond what client:form loads itself: the imports of the
// form's island and of React's renderer, and supabase-js with its imports. The browser would
// discover them one round trip after another (the island and the renderer, then their imports,
// then supabase-js once the island asks for it); named in the page, client:form preloads them all
// at the first sign of intent, side by side.
// Their names carry content hashes that exist only once Vite has bundled the client, which is
// after the pages are rendered: the page holds INTENT_MODULES, and the build's last step writes
// the names in its place. (`npm run dev` keeps the placeholder, which client:form ignores.)
import type { AstroIntegration } from "astro";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Rollup } from "vite";

/** What the page holds until the build writes the modules' addresses in. */
export const INTENT_MODULES = "__intent_modules__";

/** The chunks whose imports a sign-up waits for: the form's island's and React's renderer's. */
const IMPORTS_OF = ["/src/components/EarlyAccessForm.tsx", "/node_modules/@astrojs/react/dist/client.js"];
/** The chunk a sign-up waits for, with its imports. */
const WITH_IMPORTS = "/node_modules/@supabase/supabase-js/";

/** The files to preload, from the client build's chunks. */
export function intentFiles(bundle: Rollup.OutputBundle): string[] {
  const chunks = Object.values(bundle).filter((file): file is Rollup.OutputChunk => file.type === "chunk");
  const chunkOf = (module: string) => {
    const found = chunks.find((chunk) => chunk.facadeModuleId?.includes(module));
    if (!found) throw new Error(`intent-modules: no chunk for ${module} in the client build.`);
    return found;
  };
  const supabase = chunkOf(WITH_IMPORTS);
  const imports = IMPORTS_OF.flatMap((module) => chunkOf(module).imports);
  return [...new Set([...imports, supabase.fileName, ...supabase.imports])];
}

export default function intentModules(): AstroIntegration {
  let files: string[] = [];
  let base = "/";
  return {
    name: "intent-modules",
    hooks: {
      "astro:config:setup": ({ config, updateConfig }) => {
        base = config.base.endsWith("/") ? config.base : `${config.base}/`;
        updateConfig({
          vite: {
            plugins: [
              {
                name: "intent-modules",
                applyToEnvironment: (environment) => environment.name === "client",
                generateBundle(_, bundle) {
                  files = intentFiles(bundle);
                },
              },
            ],
          },
        });
      },
      "astro:build:done": ({ dir }) => {
        const addresses = files.map((file) => base + file).join(" ");
        const root = fileURLToPath(dir);
        for (const page of readdirSync(root, { recursive: true, encoding: "utf8" })) {
          if (!page.endsWith(".html")) continue;
          const html = readFileSync(join(root, page), "utf8");
          if (html.includes(INTENT_MODULES))
            writeFileSync(join(root, page), html.replaceAll(INTENT_MODULES, addresses));
        }
      },
    },
  };
}
