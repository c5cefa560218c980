// Serves a built site the way a static bucket or CDN would: compressed, cached, with the
// headers of the build's `_headers` file, and answering any unknown path with 404.html and
// status 404.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { headersFor, parseHeadersFile } from "./headers-file.ts";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".ics": "text/calendar; charset=utf-8",
  ".webmanifest": "application/manifest+json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".txt": "text/plain; charset=utf-8",
  ".xml": "application/xml; charset=utf-8",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
};

// Already-compressed formats gain nothing from another pass.
const COMPRESSIBLE = new Set([
  ".html",
  ".css",
  ".js",
  ".mjs",
  ".json",
  ".ics",
  ".webmanifest",
  ".svg",
  ".txt",
  ".xml",
]);

// Astro fingerprints everything under /_astro/, so those files never change under a URL.
const IMMUTABLE_PREFIX = "/_astro/";

// Read by the host, never served, as on Netlify and Cloudflare Pages.
const HEADERS_FILE = "_headers";

type Encoding = "br" | "gzip" | "identity";

interface Variant {
  body: Buffer;
  etag: string;
}

export interface StaticHostOptions {
  /** The build's output folder. */
  root: string;
}

export function createStaticHost({ root }: StaticHostOptions) {
  // The build does not change while it is served, so each file is read and compressed once.
  const cache = new Map<string, Promise<Variant | null>>();
  const headersFile = join(root, HEADERS_FILE);
  const rules = existsSync(headersFile) ? parseHeadersFile(readFileSync(headersFile, "utf8")) : [];

  function variant(file: string, encoding: Encoding): Promise<Variant | null> {
    const key = `${encoding}:${file}`;
    let entry = cache.get(key);
    if (!entry) {
      entry = readVariant(file, encoding);
      cache.set(key, entry);
    }
    return entry;
  }

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<number> {
    const pathname = safePathname(req.url ?? "/");
    // Every answer carries them, a 404 or a 405 too.
    const ruled = headersFor(rules, pathname ?? "/");
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { ...ruled, Allow: "GET, HEAD" }).end();
      return 405;
    }
    const found =
      pathname === null || pathname === `/${HEADERS_FILE}` ? null : await resolveFile(root, pathname);
    const status = found ? 200 : 404;
    const file = found ?? join(root, "404.html");
    const ext = extname(file);
    const encoding = COMPRESSIBLE.has(ext) ? negotiate(req.headers["accept-encoding"]) : "identity";
    const body = await variant(file, encoding);
    if (!body) {
      res.writeHead(404, { ...ruled, "Content-Type": "text/plain; charset=utf-8" }).end("Not found");
      return 404;
    }

    const headers: Record<string, string> = {
      "Content-Type": CONTENT_TYPES[ext] ?? "application/octet-stream",
      "Cache-Control":
        status === 200 && pathname!.startsWith(IMMUTABLE_PREFIX)
          ? "public, max-age=31536000, immutable"
          : "public, max-age=0, must-revalidate",
      ETag: body.etag,
      ...ruled,
    };
    if (COMPRESSIBLE.has(ext)) headers["Vary"] = "Accept-Encoding";
    if (encoding !== "identity") headers["Content-Encoding"] = encoding;

    if (status === 200 && req.headers["if-none-match"] === body.etag) {
      res.writeHead(304, headers).end();
      return 304;
    }
    headers["Content-Length"] = String(body.body.length);
    res.writeHead(status, headers);
    res.end(req.method === "HEAD" ? undefined : body.body);
    return status;
  };
}

/** The decoded path, or null when it tries to leave the site's folder. */
function safePathname(url: string): string | null {
  let pathname: string;
  try {
    pathname = decodeURIComponent(new URL(url, "http://host").pathname);
  } catch {
    return null;
  }
  const normalized = normalize(pathname);
  if (normalized.includes("\0") || normalized.split(sep).includes("..")) return null;
  return normalized;
}

/** Maps a URL path onto a built file: `/` → index.html, `/about` → about.html or about/index.html. */
async function resolveFile(root: string, pathname: string): Promise<string | null> {
  const candidates = pathname.endsWith("/")
    ? [join(root, pathname, "index.html")]
    : [join(root, pathname), join(root, `${pathname}.html`), join(root, pathname, "index.html")];
  for (const candidate of candidates) {
    const info = await stat(candidate).catch(() => null);
    if (info?.isFile()) return candidate;
  }
  return null;
}

function negotiate(acceptEncoding: string | undefined): Encoding {
  const accepted = (acceptEncoding ?? "").split(",").map((part) => part.split(";")[0]!.trim());
  if (accepted.includes("br")) return "br";
  if (accepted.includes("gzip")) return "gzip";
  return "identity";
}

async function readVariant(file: string, encoding: Encoding): Promise<Variant | null> {
  const raw = await readFile(file).catch(() => null);
  if (!raw) return null;
  const body =
    encoding === "br"
      ? brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } })
      : encoding === "gzip"
        ? gzipSync(raw, { level: 9 })
        : raw;
  const hash = createHash("sha1").update(raw).digest("base64url").slice(0, 16);
  return { body, etag: `"${hash}-${encoding}"` };
}
