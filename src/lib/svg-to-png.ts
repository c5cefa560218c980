// SVG to PNG at build time, with resvg (WebAssembly: nothing native to install), set up once for
// every image the build draws (the social image, the favicon). It never reaches the browser.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { initWasm, Resvg, type ResvgRenderOptions } from "@resvg/resvg-wasm";

let ready: Promise<void> | undefined;

export async function svgToPng(svg: string, options?: ResvgRenderOptions): Promise<Uint8Array<ArrayBuffer>> {
  ready ??= readFile(createRequire(import.meta.url).resolve("@resvg/resvg-wasm/index_bg.wasm")).then(
    initWasm,
  );
  await ready;
  // Copied out of WebAssembly's memory, into a buffer a Response takes.
  return new Uint8Array(new Resvg(svg, options).render().asPng());
}
