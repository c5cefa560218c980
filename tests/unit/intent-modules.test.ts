// Which files client:form preloads on first intent, read from the client build's chunks.
import { describe, expect, it } from "vitest";
import type { Rollup } from "vite";
import { intentFiles } from "../../src/integrations/intent-modules.ts";

const chunk = (fileName: string, facadeModuleId: string | null, imports: string[] = []) =>
  ({ type: "chunk", fileName, facadeModuleId, imports }) as unknown as Rollup.OutputChunk;

const bundle = (...chunks: Rollup.OutputChunk[]): Rollup.OutputBundle =>
  Object.fromEntries(chunks.map((file) => [file.fileName, file]));

const ISLAND = chunk("_astro/EarlyAccessForm.1.js", "/p/src/components/EarlyAccessForm.tsx", [
  "_astro/runtime.js",
  "_astro/react.js",
]);
const RENDERER = chunk("_astro/client.2.js", "/p/node_modules/@astrojs/react/dist/client.js", [
  "_astro/runtime.js",
  "_astro/react.js",
  "_astro/react-dom.js",
]);
const SUPABASE = chunk("_astro/dist.3.js", "/p/node_modules/@supabase/supabase-js/dist/index.mjs", [
  "_astro/runtime.js",
]);
const SONNER = chunk("_astro/dist.4.js", "/p/node_modules/sonner/dist/index.mjs", ["_astro/react-dom.js"]);

describe("intentFiles", () => {
  it("is the island's and the renderer's imports, and supabase-js's chunk with its own, once each", () => {
    expect(intentFiles(bundle(ISLAND, RENDERER, SUPABASE, SONNER))).toEqual([
      "_astro/runtime.js",
      "_astro/react.js",
      "_astro/react-dom.js",
      "_astro/dist.3.js",
    ]);
  });

  it.each([
    ["the form's island", [RENDERER, SUPABASE], /EarlyAccessForm\.tsx/],
    ["React's renderer", [ISLAND, SUPABASE], /@astrojs\/react/],
    ["supabase-js", [ISLAND, RENDERER], /supabase-js/],
  ])(
    "stops the build when %s has no chunk (a renamed file must not quietly preload nothing)",
    (_, chunks, named) => {
      expect(() => intentFiles(bundle(...chunks))).toThrow(named);
    },
  );
});
