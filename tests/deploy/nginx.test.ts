// deploy/nginx.conf in a real nginx (Debian's nginx-light), serving the tests' own build: the
// status codes, content types, security headers, caching and compression the README promises,
// on /, a file under /_astro/, /launch.ics and an unknown path. The headers must be exactly
// those of the build's _headers, which nginx cannot read: the file repeats them by hand.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { headersFor, parseHeadersFile } from "../../server/headers-file.ts";
import { useTestEnvironment } from "../test-environment.ts";
import { findNginx, INSTALL_HINT, startNginx, type NginxServer } from "./nginx-server.ts";

const DIST = useTestEnvironment().dist;
const nginx = findNginx();

// CI installs nginx (.ci/run) and must never skip this; elsewhere, a machine without it does, loudly.
if (!nginx && process.env.CI) throw new Error(`No nginx found: ${INSTALL_HINT}.`);
if (!nginx) console.warn(`\n⚠ SKIPPED: deploy/nginx.conf in nginx. No nginx was found; ${INSTALL_HINT}.\n`);

const IMMUTABLE = "public, max-age=31536000, immutable";
const REVALIDATE = "public, max-age=0, must-revalidate";

const script = readdirSync(join(DIST, "_astro")).find((file) => file.endsWith(".js"))!;

/** What each path must answer, as the README and `npm start` do. */
const CASES = [
  { path: "/", status: 200, type: "text/html; charset=utf-8", cache: REVALIDATE, file: "index.html" },
  {
    path: `/_astro/${script}`,
    status: 200,
    type: "application/javascript; charset=utf-8",
    cache: IMMUTABLE,
    file: `_astro/${script}`,
  },
  {
    path: "/launch.ics",
    status: 200,
    type: "text/calendar; charset=utf-8",
    cache: REVALIDATE,
    file: "launch.ics",
  },
  {
    path: "/no/such/page",
    status: 404,
    type: "text/html; charset=utf-8",
    cache: REVALIDATE,
    file: "404.html",
  },
  // Not found under /_astro/ either: the not-found page, never cached for a year.
  {
    path: "/_astro/gone.js",
    status: 404,
    type: "text/html; charset=utf-8",
    cache: REVALIDATE,
    file: "404.html",
  },
  // The hosts' own file is never served.
  { path: "/_headers", status: 404, type: "text/html; charset=utf-8", cache: REVALIDATE, file: "404.html" },
];

describe.skipIf(!nginx)("deploy/nginx.conf", () => {
  let server: NginxServer;
  beforeAll(async () => {
    server = await startNginx(nginx!, DIST);
  }, 30_000);
  afterAll(() => server?.stop());

  const get = (path: string, acceptEncoding = "gzip") =>
    fetch(server.url + path, { headers: { "accept-encoding": acceptEncoding } });

  const headerRules = () => parseHeadersFile(readFileSync(join(DIST, "_headers"), "utf8"));

  describe.each(CASES)("$path", ({ path, status, type, cache, file }) => {
    it(`answers ${status} with ${file}, as ${type}`, async () => {
      const response = await get(path, "identity");
      expect(response.status).toBe(status);
      expect(response.headers.get("content-type")).toBe(type);
      expect(await response.text()).toBe(readFileSync(join(DIST, file), "utf8"));
    });

    it("sends every header of _headers, with its value", async () => {
      const { headers } = await get(path);
      const expected = headersFor(headerRules(), path);
      expect(Object.keys(expected).length, "headers in _headers").toBeGreaterThan(0);
      for (const [name, value] of Object.entries(expected)) expect(headers.get(name), name).toBe(value);
    });

    it(`is cached: ${cache}`, async () => {
      expect((await get(path)).headers.get("cache-control")).toBe(cache);
    });

    it("is gzipped for a browser that accepts it", async () => {
      // fetch decompresses the body; the headers say how it came.
      const response = await get(path);
      expect(response.headers.get("content-encoding")).toBe("gzip");
      expect(response.headers.get("vary")).toBe("Accept-Encoding");
      expect(await response.text()).toBe(readFileSync(join(DIST, file), "utf8"));
    });
  });

  it("serves the social image as a PNG, uncompressed (it is already)", async () => {
    const response = await get("/og.png");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("content-encoding")).toBeNull();
    expect(Buffer.from(await response.arrayBuffer()).equals(readFileSync(join(DIST, "og.png")))).toBe(true);
  });

  it("tells a browser whose copy is current so (304), by ETag", async () => {
    const first = await get("/", "identity");
    const etag = first.headers.get("etag");
    expect(etag).toBeTruthy();
    const again = await fetch(`${server.url}/`, { headers: { "if-none-match": etag! } });
    expect(again.status).toBe(304);
  });
});
