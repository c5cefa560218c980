// Serves a built site the way a static bucket or CDN would: compressed, cached, with the
// headers of the build's `_headers` file, and answering any unknown path with 404.html and
// status 404.
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { headersFor, parseHeadersFile, type HeaderRule } from "./headers-file.ts";

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

// What Netlify and Cloudflare Pages send for a file `_headers` names no Cache-Control for.
const REVALIDATE = "public, max-age=0, must-revalidate";

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
  // Each file is read and compressed once, and again only when a new build has replaced it.
  const cache = new Map<string, { stamp: string; variant: Promise<Variant | null> }>();
  const headersFile = join(root, HEADERS_FILE);
  let headers: { stamp: string | null; rules: HeaderRule[] } = { stamp: null, rules: [] };

  function variant(file: Found, encoding: Encoding): Promise<Variant | null> {
    const key = `${encoding}:${file.path}`;
    let entry = cache.get(key);
    if (entry?.stamp !== file.stamp) {
      entry = { stamp: file.stamp, variant: readVariant(file.path, encoding) };
      cache.set(key, entry);
    }
    return entry.variant;
  }

  /** The rules of the build's `_headers`, read anew whenever the file changes (or appears). */
  async function headerRules(): Promise<HeaderRule[]> {
    const stamp = await fileStamp(headersFile);
    if (stamp !== headers.stamp) {
      const text = stamp === null ? "" : await readFile(headersFile, "utf8").catch(() => "");
      headers = { stamp, rules: parseHeadersFile(text) };
    }
    return headers.rules;
  }

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<number> {
    const pathname = safePathname(req.url ?? "/");
    // Every answer carries them, a 404 or a 405 too.
    const ruled = headersFor(await headerRules(), pathname ?? "/");
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { ...ruled, allow: "GET, HEAD" }).end();
      return 405;
    }
    const found =
      pathname === null || pathname === `/${HEADERS_FILE}` ? null : await resolveFile(root, pathname);
    const status = found ? 200 : 404;
    const file = found ?? (await resolveFile(root, "/404.html"));
    const ext = extname(file?.path ?? "");
    const encoding = COMPRESSIBLE.has(ext) ? negotiate(req.headers["accept-encoding"]) : "identity";
    const body = file && (await variant(file, encoding));
    if (!body) {
      res.writeHead(404, { ...ruled, "content-type": "text/plain; charset=utf-8" }).end("Not found");
      return 404;
    }

    const headers: Record<string, string> = {
      "content-type": CONTENT_TYPES[ext] ?? "application/octet-stream",
      etag: body.etag,
      ...ruled,
      // The file's caching, as `_headers` says (/_astro/* for a year); never for a missing one,
      // which a build may add under its path.
      "cache-control": (status === 200 && ruled["cache-control"]) || REVALIDATE,
    };
    if (COMPRESSIBLE.has(ext)) headers["vary"] = "Accept-Encoding";
    if (encoding !== "identity") headers["content-encoding"] = encoding;

    if (status === 200 && req.headers["if-none-match"] === body.etag) {
      res.writeHead(304, headers).end();
      return 304;
    }
    headers["content-length"] = String(body.body.length);
    res.writeHead(status, headers);
    res.end(req.method === "HEAD" ? undefined : body.body);
    return status;
  };
}

/** A built file, and its stamp: its modification time and size, which a rebuild changes. */
interface Found {
  path: string;
  stamp: string;
}

async function fileStamp(path: string): Promise<string | null> {
  const info = await stat(path).catch(() => null);
  return info?.isFile() ? `${info.mtimeMs}:${info.size}` : null;
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
async function resolveFile(root: string, pathname: string): Promise<Found | null> {
  const candidates = pathname.endsWith("/")
    ? [join(root, pathname, "index.html")]
    : [join(root, pathname), join(root, `${pathname}.html`), join(root, pathname, "index.html")];
  for (const path of candidates) {
    const stamp = await fileStamp(path);
    if (stamp !== null) return { path, stamp };
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
