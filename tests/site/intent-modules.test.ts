// Which files client:form preloads at the visitor's first move: written into the built page from
// the island's own component-url and renderer-url and the client build's chunks.
import { describe, expect, it } from "vitest";
import {
  fillIntentModules,
  INTENT_MODULES,
  type ClientChunks,
} from "../../src/integrations/intent-modules.ts";

const chunks: ClientChunks = {
  imports: new Map([
    ["_astro/EarlyAccessForm.1.js", ["_astro/runtime.js", "_astro/react.js"]],
    ["_astro/client.2.js", ["_astro/runtime.js", "_astro/react.js", "_astro/react-dom.js"]],
    ["_astro/dist.3.js", ["_astro/runtime.js"]],
    ["_astro/Countdown.4.js", ["_astro/react.js", "_astro/countdown-only.js"]],
  ]),
  supabase: "_astro/dist.3.js",
};

const island = (base: string, component: string, value = INTENT_MODULES) =>
  `<astro-island component-url="${base}${component}" renderer-url="${base}_astro/client.2.js" ` +
  `opts="{&quot;value&quot;:{&quot;modules&quot;:&quot;${value}&quot;}}"></astro-island>`;

const modulesIn = (html: string) => /modules&quot;:&quot;([^&]*)/.exec(html)?.[1];

describe("fillIntentModules", () => {
  it.each([
    // The island's and the renderer's imports, then supabase-js's chunk and its imports, once each.
    ["/", "/_astro/runtime.js /_astro/react.js /_astro/react-dom.js /_astro/dist.3.js"],
    // Under a base path, the island's URLs carry it, and so do the addresses written in.
    [
      "/soon/",
      "/soon/_astro/runtime.js /soon/_astro/react.js /soon/_astro/react-dom.js /soon/_astro/dist.3.js",
    ],
  ])("with base %j writes %j", (base, expected) => {
    const html = fillIntentModules(island(base, "_astro/EarlyAccessForm.1.js"), chunks, base);
    expect(modulesIn(html)).toBe(expected);
  });

  it("leaves an island without the placeholder as it is", () => {
    const other = island("/", "_astro/Countdown.4.js", "none");
    expect(fillIntentModules(other, chunks, "/")).toBe(other);
  });

  it("stops the build when the island's module is not a chunk of the client build", () => {
    expect(() => fillIntentModules(island("/", "_astro/Missing.js"), chunks, "/")).toThrow(/Missing\.js/);
  });
});
