// Reads what a built page ships: the modules its HTML starts, the modules those import, its
// stylesheets, and how many bytes each weighs once brotli-compressed as the static host serves it.
// Astro's minified output is regular enough for patterns; no parser needed.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { brotliCompressSync, constants } from "node:zlib";
import { useTestEnvironment } from "../../test-environment.ts";

const DIST = useTestEnvironment().dist;

/** One thing a page ships: a file of the build (by URL path) or a block inlined in the HTML. */
export interface Asset {
  name: string;
  content: string;
}

export function readPage(file: string): string {
  const path = join(DIST, file);
  if (!existsSync(path)) throw new Error(`No ${file} in the build at ${DIST}.`);
  return readFileSync(path, "utf8");
}

/** Bytes on the wire: brotli at the quality the static host uses. */
function brotliSize(content: string): number {
  return brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
}

/** Each asset's compressed size, largest first. */
export function compressedSizes(assets: Asset[]): { name: string; size: number }[] {
  return assets
    .map(({ name, content }) => ({ name, size: brotliSize(content) }))
    .sort((a, b) => b.size - a.size);
}

/** Opening tags of one element name, with attribute values that may contain `>`. */
export function tags(html: string, name: string): Map<string, string>[] {
  const pattern = new RegExp(`<${name}\\b((?:[^>"']|"[^"]*"|'[^']*')*)>`, "gi");
  return [...html.matchAll(pattern)].map((match) => attributes(match[1]!));
}

function attributes(source: string): Map<string, string> {
  const pattern = /([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
  return new Map(
    [...source.matchAll(pattern)].map((m) => [m[1]!.toLowerCase(), m[2] ?? m[3] ?? m[4] ?? ""] as const),
  );
}

/** The text inside every `<name …>…</name>`, with that element's attributes. */
export function elements(html: string, name: string): { attrs: Map<string, string>; body: string }[] {
  const pattern = new RegExp(`<${name}\\b((?:[^>"']|"[^"]*"|'[^']*')*)>([\\s\\S]*?)</${name}>`, "gi");
  return [...html.matchAll(pattern)].map((match) => ({ attrs: attributes(match[1]!), body: match[2]! }));
}

/** How the HTML starts a module: each entry is a URL path, or an inline module's source. */
export type ModuleEntry = { via: string } & ({ url: string } | { inline: string });

/** Every way an HTML page makes the browser load a JavaScript module before any interaction. */
export function moduleEntries(html: string): ModuleEntry[] {
  const entries: ModuleEntry[] = [];
  for (const { attrs, body } of elements(html, "script")) {
    if (attrs.get("type") !== "module") continue;
    const src = attrs.get("src");
    entries.push(
      src
        ? { via: "<script type=module src>", url: src }
        : { via: "inline <script type=module>", inline: body },
    );
  }
  for (const attrs of tags(html, "astro-island")) {
    for (const attribute of ["component-url", "renderer-url", "before-hydration-url"]) {
      const url = attrs.get(attribute);
      if (url) entries.push({ via: `<astro-island ${attribute}>`, url });
    }
  }
  for (const attrs of tags(html, "link")) {
    const href = attrs.get("href");
    if (attrs.get("rel") === "modulepreload" && href)
      entries.push({ via: "<link rel=modulepreload>", url: href });
  }
  return entries;
}

// Script types a browser runs; others (`application/ld+json`, say) are data.
const JAVASCRIPT_TYPES = new Set(["", "module", "text/javascript"]);

/** Every inline script, module or classic: JavaScript the page runs without a request. */
export function inlineScripts(html: string, page: string): Asset[] {
  const bodies = elements(html, "script")
    .filter(({ attrs }) => !attrs.has("src") && JAVASCRIPT_TYPES.has(attrs.get("type") ?? ""))
    .map(({ body }) => body);
  return bodies.length ? [{ name: `inline <script> in ${page}`, content: bodies.join("\n") }] : [];
}

/** The stylesheets a page links plus its inline <style> blocks. */
export function styles(html: string, page: string): Asset[] {
  const linked = tags(html, "link")
    .filter((attrs) => attrs.get("rel") === "stylesheet" && attrs.has("href"))
    .map((attrs) => readAsset(attrs.get("href")!));
  const inline = elements(html, "style").map(({ body }) => body);
  return inline.length
    ? [...linked, { name: `inline <style> in ${page}`, content: inline.join("\n") }]
    : linked;
}

// Rolldown writes `import{a as b}from"./x.js"`, `import"./x.js"` and `export{a}from"./x.js"`;
// a dynamic `import(\`./x.js\`)` has a parenthesis after `import`, so the first pattern skips it.
// Only paths count: a browser cannot load a bare name like "pkg/x", which shows up in libraries'
// messages ("Add `import 'pkg/x'` to your entry point").
const STATIC_IMPORT = /\b(?:import|export)\s*(?:[\w$*{},\s]+?\s*from\s*)?["'](\.{0,2}\/[^"']+)["']/g;
const DYNAMIC_IMPORT = /\bimport\(\s*["'`](\.{0,2}\/[^"'`$]+)["'`]\s*\)/g;

/** The specifiers a module imports: statically only, or also through `import()`. */
function imports(source: string, withDynamic: boolean): string[] {
  const found = [...source.matchAll(STATIC_IMPORT)];
  if (withDynamic) found.push(...source.matchAll(DYNAMIC_IMPORT));
  return found.map((match) => match[1]!);
}

/**
 * The modules reachable from the entries, each once: through static imports only (what loads
 * with the page), or through dynamic `import()` too (everything the page can ever load).
 */
export function moduleGraph(entries: ModuleEntry[], { withDynamic }: { withDynamic: boolean }): Asset[] {
  const seen = new Map<string, Asset>();
  const add = (url: string) => {
    if (seen.has(url)) return;
    const asset = readAsset(url);
    seen.set(url, asset);
    follow(asset.content, url);
  };
  const follow = (source: string, base: string) => {
    for (const specifier of imports(source, withDynamic)) add(pathOf(specifier, base));
  };
  for (const entry of entries) {
    if ("url" in entry) add(pathOf(entry.url, "/"));
    else follow(entry.inline, "/");
  }
  return [...seen.values()];
}

/** A specifier as a URL path on the site, resolved against the path of the module that holds it. */
function pathOf(specifier: string, base: string): string {
  return new URL(specifier, new URL(base, "http://site")).pathname;
}

/** A file of the build by its URL path; a reference to a missing file is a broken build. */
function readAsset(url: string): Asset {
  const path = join(DIST, decodeURIComponent(url));
  if (!existsSync(path)) throw new Error(`The build references ${url}, which is not in the build.`);
  return { name: url, content: readFileSync(path, "utf8") };
}
