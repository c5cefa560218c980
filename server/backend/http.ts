// The HTTP side of the embedded backend, shaped like Supabase's API gateway in front of
// PostgREST: its routes, its CORS answers, the apikey check, a body size limit, and one log
// line per request.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { postgrestError } from "./errors.ts";
import { authenticate } from "./gateway.ts";
import { jsonResponse, ResponseError, type HttpResponse } from "./http-response.ts";
import type { RestHandler } from "./postgrest.ts";

const REST_PREFIX = "/rest/v1/";

/** Larger bodies are refused before they are held in memory; a sign-up is a few hundred bytes. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The methods Kong's cors plugin allows by default. */
const ALLOWED_METHODS = "GET,HEAD,PUT,PATCH,POST,DELETE,OPTIONS,TRACE,CONNECT";

/** What PostgREST lets a browser script read from its answers (Cors.hs). */
const EXPOSED_HEADERS =
  "Content-Encoding, Content-Location, Content-Range, Content-Type, Date, Location, Server, Transfer-Encoding, Range-Unit";

/** Statuses whose answers never carry a body, nor a Content-Length. */
const NO_BODY_STATUSES = new Set([204, 304]);

export interface GatewayOptions {
  jwtSecret: string;
  /** Opaque keys (`sb_…`) and the JWT each stands for. */
  opaqueKeys: ReadonlyMap<string, string>;
  handleRest: RestHandler;
  log: (line: string) => void;
}

export interface Gateway {
  /** Starts answering; resolves with the port bound (useful with port 0). */
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, lets answers in progress finish, then closes every connection. */
  close(): Promise<void>;
}

export function createGateway({ jwtSecret, opaqueKeys, handleRest, log }: GatewayOptions): Gateway {
  async function answer(req: IncomingMessage, url: URL): Promise<HttpResponse> {
    if (!url.pathname.startsWith(REST_PREFIX))
      return jsonResponse(404, { message: "no Route matched with those values" });
    // The gateway answers preflights itself, before any key check: browsers send no key there.
    if (req.method === "OPTIONS") return preflight(req);

    const headers = withClientAddress(flattenHeaders(req), req.socket.remoteAddress);
    // The gateway consumes the key; PostgREST would read a leftover `apikey` as a filter.
    const apikey = headers.apikey ?? url.searchParams.get("apikey");
    url.searchParams.delete("apikey");
    const identity = authenticate(apikey, headers.authorization, jwtSecret, opaqueKeys);
    const body = await readBody(req);

    const response = await handleRest({
      method: req.method ?? "GET",
      path: `/${url.pathname.slice(REST_PREFIX.length)}`,
      query: url.searchParams,
      headers,
      body,
      identity,
    });
    // PostgREST's CORS layer adds this to answers for browsers (requests with an Origin).
    if (!req.headers.origin) return response;
    return {
      ...response,
      headers: { ...response.headers, "Access-Control-Expose-Headers": EXPOSED_HEADERS },
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const url = new URL(req.url ?? "/", "http://gateway.invalid");
    const response = await answer(req, url).catch((error: unknown) => failure(error, log));
    // Kong's cors plugin puts this on every answer, errors included, so browsers can read them.
    const length = NO_BODY_STATUSES.has(response.status)
      ? {}
      : { "Content-Length": String(Buffer.byteLength(response.body)) };
    res.writeHead(response.status, { ...response.headers, ...length, "Access-Control-Allow-Origin": "*" });
    // 'close' comes once the answer is sent, or once the client has gone.
    await new Promise((closed) => res.once("close", closed).end(response.body));
    // The path only: the query string may carry an apikey.
    log(`${req.method} ${url.pathname} ${response.status} ${Math.round(performance.now() - started)}ms`);
  }

  const answering = new Set<Promise<void>>();
  const server = createServer((req, res) => {
    const handled = handle(req, res);
    answering.add(handled);
    void handled
      .catch((error: unknown) => log(`Could not answer ${req.method} ${req.url}: ${String(error)}`))
      .finally(() => answering.delete(handled));
  });

  return {
    listen: (port, host) =>
      new Promise((listening, failed) => {
        server.once("error", failed);
        server.listen(port, host, () => listening((server.address() as AddressInfo).port));
      }),
    close: async () => {
      const closed = new Promise((done) => server.close(done));
      server.closeIdleConnections();
      while (answering.size > 0) await Promise.allSettled(answering);
      // Keep-alive connections would otherwise hold the server open for seconds.
      server.closeAllConnections();
      await closed;
    },
  };
}

/** Kong's cors plugin: the requested headers echoed back, the default methods, no max age. */
function preflight(req: IncomingMessage): HttpResponse {
  const requestedHeaders = req.headers["access-control-request-headers"];
  const headers: Record<string, string> = { "Access-Control-Allow-Methods": ALLOWED_METHODS };
  if (requestedHeaders) headers["Access-Control-Allow-Headers"] = requestedHeaders;
  return { status: 200, headers, body: "" };
}

/** Node's headers (names already lower-cased) with repeated values joined, as PostgREST sees them. */
function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

/**
 * Supabase's edge (Cloudflare) tells the database who is calling: it sets `cf-connecting-ip`
 * and appends the caller to `x-forwarded-for`, so a client can put anything in front but never
 * at the end. The database's per-address limits read exactly these; here they come from the
 * socket, and whatever a client sent in their place counts for nothing.
 */
function withClientAddress(headers: Record<string, string>, socketAddress: string | undefined) {
  // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d.
  const address = (socketAddress ?? "").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
  const forwarded = headers["x-forwarded-for"];
  return {
    ...headers,
    "cf-connecting-ip": address,
    "x-real-ip": address,
    "x-forwarded-for": forwarded ? `${forwarded}, ${address}` : address,
  };
}

/**
 * The body as text, refused with 413 past MAX_BODY_BYTES. Past the limit the rest is read and
 * dropped, so the client still receives the answer and memory stays bounded.
 */
function readBody(req: IncomingMessage): Promise<string> {
  // Kong's request-size-limiting plugin's answer.
  const tooLarge = () => new ResponseError(jsonResponse(413, { message: "Request size limit exceeded" }));
  if (Number(req.headers["content-length"]) > MAX_BODY_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () =>
      size > MAX_BODY_BYTES ? reject(tooLarge()) : resolve(Buffer.concat(chunks).toString("utf8")),
    );
    req.on("error", reject);
  });
}

function failure(error: unknown, log: (line: string) => void): HttpResponse {
  if (error instanceof ResponseError) return error.response;
  log(`Unexpected error: ${error instanceof Error ? error.stack : String(error)}`);
  return postgrestError(500, "PGRSTX00", "Internal error in the embedded backend").response;
}
