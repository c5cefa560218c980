// The static host `npm start` serves the build with: what a CDN or bucket would answer.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStaticHost } from "../../tools/static-host/static-host.ts";

const INDEX = "<!doctype html><title>home</title>" + "<p>The Future Awaits</p>".repeat(50);
const NOT_FOUND = "<!doctype html><title>404</title>";
const SCRIPT = "console.log('island');".repeat(20);
const HEADERS =
  "/*\n  X-Frame-Options: DENY\n/_astro/*\n  X-Robots-Tag: noindex\n  Cache-Control: public, max-age=31536000, immutable\n";

let server: Server;
let base: string;

beforeAll(async () => {
  const root = mkdtempSync(join(tmpdir(), "static-host-"));
  mkdirSync(join(root, "_astro"));
  mkdirSync(join(root, "about"));
  writeFileSync(join(root, "index.html"), INDEX);
  writeFileSync(join(root, "404.html"), NOT_FOUND);
  writeFileSync(join(root, "about", "index.html"), "about");
  writeFileSync(join(root, "_astro", "island.abc123.js"), SCRIPT);
  writeFileSync(join(root, "og.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  writeFileSync(join(root, "launch.ics"), "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n");
  writeFileSync(join(root, "_headers"), HEADERS);
  const host = createStaticHost({ root });
  server = createServer((req, res) => void host(req, res));
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((closed) => server.close(closed)));

/** A raw request: fetch() would decompress the body itself, and the encoding is under test here. */
function get(path: string, headers: Record<string, string> = {}, method = "GET") {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    request(base + path, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }),
      );
    })
      .on("error", reject)
      .end();
  });
}

describe("which file answers", () => {
  it.each([
    // The landing page.
    ["/", 200, INDEX],
    // Directory-style pages, with and without the trailing slash.
    ["/about/", 200, "about"],
    ["/about", 200, "about"],
    // Any other path: the not-found page, with status 404.
    ["/nowhere", 404, NOT_FOUND],
    ["/_astro/missing.js", 404, NOT_FOUND],
    // Leaving the site's folder is impossible, however the path is spelled.
    ["/../../etc/passwd", 404, NOT_FOUND],
    ["/%2e%2e/%2e%2e/etc/passwd", 404, NOT_FOUND],
    // A malformed escape is not found, not an error.
    ["/%E0%A4%A", 404, NOT_FOUND],
    // The host reads `_headers`, and never serves it, as Netlify and Cloudflare Pages do not.
    ["/_headers", 404, NOT_FOUND],
  ])("%s → %i", async (path, status, body) => {
    const response = await get(path);
    expect(response.status).toBe(status);
    expect(response.body.toString()).toBe(body);
  });
});

describe("content types", () => {
  it.each([
    ["/", "text/html; charset=utf-8"],
    ["/_astro/island.abc123.js", "text/javascript; charset=utf-8"],
    // What calendar apps expect of "Add to calendar".
    ["/launch.ics", "text/calendar; charset=utf-8"],
    ["/og.png", "image/png"],
  ])("%s → %s", async (path, type) => {
    expect((await get(path)).headers["content-type"]).toBe(type);
  });
});

describe("the headers of _headers", () => {
  it.each([
    // On every answer whose path a rule matches: a page, ...
    ["GET", "/", { "x-frame-options": "DENY" }],
    // ... an asset, with the headers of every rule that matches, ...
    ["GET", "/_astro/island.abc123.js", { "x-frame-options": "DENY", "x-robots-tag": "noindex" }],
    // ... the not-found page, ...
    ["GET", "/nowhere", { "x-frame-options": "DENY" }],
    // ... and a refused method.
    ["POST", "/", { "x-frame-options": "DENY" }],
  ])("%s %s", async (method, path, expected) => {
    const { headers } = await get(path, {}, method);
    expect(headers).toMatchObject(expected);
    if (!("x-robots-tag" in expected)) expect(headers["x-robots-tag"]).toBeUndefined();
  });
});

describe("compression", () => {
  it.each([
    // Brotli is preferred when offered.
    ["gzip, deflate, br", "br", brotliDecompressSync],
    // gzip otherwise.
    ["gzip", "gzip", gunzipSync],
  ])("accept-encoding %s → %s", async (accept, encoding, decompress) => {
    const response = await get("/", { "accept-encoding": accept });
    expect(response.headers["content-encoding"]).toBe(encoding);
    expect(response.headers["vary"]).toBe("Accept-Encoding");
    expect(decompress(response.body).toString()).toBe(INDEX);
    expect(response.body.length).toBeLessThan(INDEX.length);
  });

  it("leaves already-compressed formats alone", async () => {
    const response = await get("/og.png", { "accept-encoding": "br" });
    expect(response.headers["content-encoding"]).toBeUndefined();
    expect(response.headers["content-type"]).toBe("image/png");
  });
});

describe("caching", () => {
  it("caches a file as _headers says", async () => {
    const response = await get("/_astro/island.abc123.js");
    expect(response.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(response.headers["content-type"]).toBe("text/javascript; charset=utf-8");
  });

  it("revalidates what _headers says nothing of, and answers 304 when it has not changed", async () => {
    const first = await get("/");
    expect(first.headers["cache-control"]).toBe("public, max-age=0, must-revalidate");
    const again = await get("/", { "if-none-match": first.headers.etag! });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  it("never caches the not-found answer as _headers says of the path", async () => {
    const response = await get("/_astro/missing.js");
    expect(response.headers["cache-control"]).toBe("public, max-age=0, must-revalidate");
  });
});

describe("methods", () => {
  it("answers HEAD with headers only", async () => {
    const response = await get("/", {}, "HEAD");
    expect(response.status).toBe(200);
    expect(response.headers["content-length"]).toBe(String(INDEX.length));
    expect(response.body.length).toBe(0);
  });

  it("refuses other methods", async () => {
    const response = await get("/", {}, "POST");
    expect(response.status).toBe(405);
    expect(response.headers["allow"]).toBe("GET, HEAD");
  });
});

describe("a build made while the host runs", () => {
  // `npm start` starts its host before it builds, and `npm run build` may rebuild under a running
  // `npm run preview`: what is served must be the build as it is now.
  let root: string;
  let served: Server;
  let at: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "static-host-rebuilt-"));
    const host = createStaticHost({ root });
    served = createServer((req, res) => void host(req, res));
    await new Promise<void>((listening) => served.listen(0, "127.0.0.1", listening));
    at = `http://127.0.0.1:${(served.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise((closed) => served.close(closed)));

  it("applies a _headers written after the host started, and its later changes", async () => {
    // Before the build: an empty folder, nothing to apply yet.
    expect((await fetch(`${at}/`)).headers.get("x-frame-options")).toBeNull();

    writeFileSync(join(root, "index.html"), INDEX);
    writeFileSync(join(root, "_headers"), "/*\n  X-Frame-Options: DENY\n");
    expect((await fetch(`${at}/`)).headers.get("x-frame-options")).toBe("DENY");

    writeFileSync(join(root, "_headers"), "/*\n  X-Frame-Options: SAMEORIGIN\n  X-Robots-Tag: none\n");
    const { headers } = await fetch(`${at}/`);
    expect(headers.get("x-frame-options")).toBe("SAMEORIGIN");
    expect(headers.get("x-robots-tag")).toBe("none");
  });

  it("serves a page a rebuild replaced, with a new ETag", async () => {
    writeFileSync(join(root, "index.html"), "<p>first build</p>");
    const first = await fetch(`${at}/`);
    expect(await first.text()).toBe("<p>first build</p>");

    writeFileSync(join(root, "index.html"), "<p>second build, longer</p>");
    const second = await fetch(`${at}/`);
    expect(await second.text()).toBe("<p>second build, longer</p>");
    expect(second.headers.get("etag")).not.toBe(first.headers.get("etag"));
  });
});
