// deploy/nginx.conf in a real nginx (Debian's nginx-light), serving the tests' own build over
// HTTPS with a throwaway certificate: plain HTTP sent to HTTPS on the same host, and the status
// codes, content types, headers, caching and compression the README promises, on /, a file under
// /_astro/, /launch.ics and an unknown path. The headers must be exactly those of the build's
// _headers (which nginx cannot read: the file repeats them by hand), the hosts' default caching
// where _headers names none, and HSTS: what Mozilla's HTTP Observatory grades A+.
import { readdirSync, readFileSync } from "node:fs";
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { headersFor, parseHeadersFile } from "../../tools/static-host/headers-file.ts";
import { useTestEnvironment } from "../test-environment.ts";
import {
  findNginx,
  INSTALL_HINT,
  SERVER_NAME,
  startNginx,
  testShippedFile,
  type NginxServer,
} from "./nginx-server.ts";

const DIST = useTestEnvironment().dist;
const programs = findNginx();

// CI installs nginx and openssl (.ci/run) and must never skip this; elsewhere, a machine without
// them does, loudly.
if (!programs && process.env.CI) throw new Error(`No nginx or openssl found: ${INSTALL_HINT}.`);
if (!programs) console.warn(`\n⚠ SKIPPED: deploy/nginx.conf in nginx: ${INSTALL_HINT}.\n`);

const IMMUTABLE = "public, max-age=31536000, immutable";
const REVALIDATE = "public, max-age=0, must-revalidate";
/** HTTPS only for a year: the Observatory asks for six months at least. */
const HSTS = "max-age=31536000";

/** What any server sends about the transfer itself, apart from the headers under test. */
const TRANSFER_HEADERS = new Set([
  "server",
  "date",
  "content-type",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "last-modified",
  "etag",
  "accept-ranges",
  "vary",
  "content-encoding",
]);

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

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body, decompressed. */
  text: string;
}

describe.skipIf(!programs)("deploy/nginx.conf", () => {
  let server: NginxServer;
  beforeAll(async () => {
    server = await startNginx(programs!, DIST);
  }, 30_000);
  afterAll(() => server?.stop());

  /** A request that follows no redirect, over HTTPS trusting the throwaway certificate only. */
  function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
    const send = url.startsWith("https:") ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      send(url, { headers, ca: server.ca }, (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => {
          const body = Buffer.concat(chunks);
          const gzipped = response.headers["content-encoding"] === "gzip";
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            text: (gzipped ? gunzipSync(body) : body).toString("utf8"),
          });
        });
      })
        .on("error", reject)
        .end();
    });
  }
  const site = (path: string, acceptEncoding = "gzip") =>
    get(server.httpsUrl + path, { "accept-encoding": acceptEncoding });

  const headerRules = () => parseHeadersFile(readFileSync(join(DIST, "_headers"), "utf8"));

  it("is accepted by `nginx -t` as shipped, once the certificate exists", () => {
    const { ok, output } = testShippedFile(programs!);
    expect(output).toContain("syntax is ok");
    expect(ok, output).toBe(true);
  });

  describe.each(["/", "/no/such/page?q=1", `/_astro/${script}`, "/launch.ics"])("http:// %s", (path) => {
    it("is sent, for good, to the same address over HTTPS on the same host", async () => {
      const response = await get(server.httpUrl + path, { host: SERVER_NAME });
      expect(response.status).toBe(301);
      expect(response.headers.location).toBe(`https://${SERVER_NAME}${path}`);
    });
  });

  describe.each(CASES)("https:// $path", ({ path, status, type, cache, file }) => {
    it(`answers ${status} with ${file}, as ${type}`, async () => {
      const response = await site(path, "identity");
      expect(response.status).toBe(status);
      expect(response.headers["content-type"]).toBe(type);
      expect(response.text).toBe(readFileSync(join(DIST, file), "utf8"));
    });

    it(`sends exactly the headers of _headers, HSTS, and Cache-Control: ${cache}`, async () => {
      const { headers } = await site(path);
      const ruled = headersFor(headerRules(), path);
      expect(Object.keys(ruled).length, "headers in _headers").toBeGreaterThan(0);
      const expected = {
        ...ruled,
        "strict-transport-security": HSTS,
        // _headers' caching is the file's, not a missing file's (tools/static-host/static-host.ts does the same).
        "cache-control": status === 200 ? (ruled["cache-control"] ?? REVALIDATE) : REVALIDATE,
      };
      const sent = Object.fromEntries(
        Object.entries(headers).filter(([name]) => !TRANSFER_HEADERS.has(name)),
      );
      expect(sent).toEqual(expected);
      expect(expected["cache-control"]).toBe(cache);
    });

    it("is gzipped for a browser that accepts it", async () => {
      const response = await site(path);
      expect(response.headers["content-encoding"]).toBe("gzip");
      expect(response.headers["vary"]).toBe("Accept-Encoding");
      expect(response.text).toBe(readFileSync(join(DIST, file), "utf8"));
    });
  });

  it("serves the social image as a PNG, uncompressed (it is already)", async () => {
    const response = await new Promise<{ type?: string; encoding?: string; body: Buffer }>(
      (resolve, reject) =>
        httpsRequest(
          `${server.httpsUrl}/og.png`,
          { ca: server.ca, headers: { "accept-encoding": "gzip" } },
          (r) => {
            const chunks: Buffer[] = [];
            r.on("data", (chunk: Buffer) => chunks.push(chunk));
            r.on("end", () =>
              resolve({
                type: r.headers["content-type"],
                encoding: r.headers["content-encoding"],
                body: Buffer.concat(chunks),
              }),
            );
          },
        )
          .on("error", reject)
          .end(),
    );
    expect(response.type).toBe("image/png");
    expect(response.encoding).toBeUndefined();
    expect(response.body.equals(readFileSync(join(DIST, "og.png")))).toBe(true);
  });

  it("tells a browser whose copy is current so (304), by ETag", async () => {
    const first = await site("/", "identity");
    const etag = first.headers.etag;
    expect(etag).toBeTruthy();
    const again = await get(`${server.httpsUrl}/`, { "if-none-match": etag! });
    expect(again.status).toBe(304);
  });
});
