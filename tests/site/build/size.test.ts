// The size budget: what the production build ships, in brotli-compressed bytes (the tests' own
// build, tests/support/build.setup.ts). Bytes, not time, so it never flakes; a failure lists every file
// with its size, so it names what grew.
import { describe, expect, test } from "vitest";
import {
  type Asset,
  compressedSizes,
  inlineScripts,
  moduleEntries,
  moduleGraph,
  readPage,
  styles,
} from "./build-graph.ts";

const KiB = 1024;

// Strings that survive minification, one chunk holding all of a library's markers.
// Checked against the build: supabase-js (src/lib/supabase-client.ts) sends
// `X-Client-Info: supabase-js/<version>`; sonner renders `data-sonner-toaster` on its container.
const LAZY_LIBRARIES = [
  { library: "the Supabase client", markers: ["supabase-js", "x-client-info"] },
  { library: "sonner", markers: ["data-sonner-toaster"] },
];

const index = readPage("index.html");
const notFound = readPage("404.html");

const entries = moduleEntries(index);
// Inline scripts count too: they are JavaScript the page runs before any interaction.
const initialJs = [...inlineScripts(index, "index.html"), ...moduleGraph(entries, { withDynamic: false })];
const lazyJs = moduleGraph(entries, { withDynamic: true }).filter(
  (module) => !initialJs.some((initial) => initial.name === module.name),
);

const BUDGETS = [
  { what: "the JavaScript / loads before any interaction", assets: initialJs, budget: 70 * KiB },
  { what: "the CSS of /", assets: styles(index, "index.html"), budget: 15 * KiB },
];

const kib = (bytes: number) => `${(bytes / KiB).toFixed(1)} KiB`;

describe.each(BUDGETS)("$what", ({ what, assets, budget }) => {
  test(`is at most ${kib(budget)} brotli-compressed`, () => {
    const sizes = compressedSizes(assets);
    const total = sizes.reduce((sum, { size }) => sum + size, 0);
    const listing = sizes.map(({ name, size }) => `  ${kib(size).padStart(10)}  ${name}`).join("\n");
    expect(total, `${what}: ${kib(total)} brotli, budget ${kib(budget)}\n${listing}\n`).toBeLessThanOrEqual(
      budget,
    );
  });
});

const holdsAll = (markers: string[]) => (asset: Asset) =>
  markers.every((marker) => asset.content.toLowerCase().includes(marker));

describe.each(LAZY_LIBRARIES)("$library", ({ library, markers }) => {
  test("is not in the JavaScript / loads before any interaction", () => {
    const found = initialJs.filter(holdsAll(markers)).map((asset) => asset.name);
    expect(found, `${library} is in the initial JavaScript of /`).toEqual([]);
  });

  // Without this the test above would pass just as well if the library were not shipped at all.
  test("is in a chunk / imports lazily", () => {
    const found = lazyJs.filter(holdsAll(markers)).map((asset) => asset.name);
    expect(found, `${library} is not among the lazily imported chunks of /`).not.toEqual([]);
  });
});

test("404.html loads no JavaScript module", () => {
  const found = moduleEntries(notFound).map((entry) => entry.via);
  expect(found, "404.html starts JavaScript modules").toEqual([]);
});
