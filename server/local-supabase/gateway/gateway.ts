// The HTTP side of the local backend, shaped like Supabase's API gateway in front of PostgREST:
// its routes, its CORS answers, the apikey check, its body size limit, the client's address
// as Supabase's edge passes it on, and one log line per request.
import { createServer, STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { finished } from "node:stream/promises";
import { postgrestError } from "../postgrest/errors.ts";
import { authenticate, fromBrowser } from "./authentication.ts";
import { JSON_CONTENT_TYPE, jsonResponse, ResponseError, type HttpResponse } from "../http-response.ts";
import type { RestHandler } from "../postgrest/app.ts";

const REST_PREFIX = "/rest/v1/";

/** Larger bodies are refused before they are held in memory (Kong's request-size-limiting). */
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

/** What the gateway knows of one connection. */
interface Connection {
  /** The client's address, read from the socket when it connected (later it may be gone). */
  address: string;
  /** The latest request on this connection, and its answer once sent (or given up). */
  request?: IncomingMessage;
  answered: Promise<void>;
  /** Whether that request was answered before all of its body had arrived. */
  bodyStillArriving: boolean;
}

export interface Gateway {
  /** Starts answering; resolves with the port bound (useful with port 0). */
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, lets answers in progress finish, then closes every connection. */
  close(): Promise<void>;
}

export function createGateway({ jwtSecret, opaqueKeys, handleRest, log }: GatewayOptions): Gateway {
  async function answer(req: IncomingMessage, url: URL, address: string): Promise<HttpResponse> {
    if (!url.pathname.startsWith(REST_PREFIX))
      return jsonResponse(404, { message: "no Route matched with those values" });
    // The gateway answers preflights itself, before any key check: browsers send no key there.
    if (req.method === "OPTIONS") return preflight(req);

    const headers = withClientAddress(flattenHeaders(req), address);
    // The gateway consumes the key; PostgREST would read a leftover `apikey` as a filter.
    const apikey = headers.apikey ?? url.searchParams.get("apikey");
    url.searchParams.delete("apikey");
    const identity = authenticate(
      { apikey, authorization: headers.authorization, browser: fromBrowser(headers) },
      jwtSecret,
      opaqueKeys,
    );
    const body = await readBody(req, MAX_BODY_BYTES);

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

  async function handle(req: IncomingMessage, res: ServerResponse, connection: Connection): Promise<void> {
    const started = performance.now();
    const url = requestUrl(req.url);
    const response = await (url ? answer(req, url, connection.address) : Promise.resolve(BAD_URL)).catch(
      (error: unknown) => failure(error, log),
    );
    if (!req.complete) {
      // Node reads and drops the rest of the body; a parser error on it is about this request.
      connection.bodyStillArriving = true;
      req.once("end", () => (connection.bodyStillArriving = false));
      // An upload refused for its size is not read on: the connection closes once the answer is
      // out, as nginx closes it after a 413.
      if (response.status === 413) res.shouldKeepAlive = false;
    }
    if (!res.destroyed) {
      // Kong's cors plugin puts this on every answer, errors included, so browsers can read them.
      const length = NO_BODY_STATUSES.has(response.status)
        ? {}
        : { "Content-Length": String(Buffer.byteLength(response.body)) };
      res.writeHead(response.status, { ...response.headers, ...length, "Access-Control-Allow-Origin": "*" });
      res.end(response.body);
    }
    // Settles once the answer is sent or the client has gone, even if it went long ago.
    await finished(res).catch(() => {});
    // The path only: the query string may carry an apikey.
    const path = url?.pathname ?? "(malformed URL)";
    const outcome = res.writableFinished ? String(response.status) : "client gone";
    log(`${req.method} ${path} ${outcome} ${Math.round(performance.now() - started)}ms`);
  }

  const answering = new Set<Promise<void>>();
  const connections = new WeakMap<Duplex, Connection>();
  const server = createServer((req, res) => {
    const connection = connections.get(req.socket)!;
    const handled = handle(req, res, connection)
      // The path only, as below: the query string may carry an apikey.
      .catch((error: unknown) =>
        log(`Could not answer ${req.method} ${req.url?.split("?")[0]}: ${String(error)}`),
      )
      .finally(() => answering.delete(handled));
    answering.add(handled);
    connection.request = req;
    connection.answered = handled;
  });
  // The client's address is read as the connection opens: a socket that is reset before its
  // request is handled no longer knows it, and the database's sign-up rules need it.
  server.on("connection", (socket: Socket) => {
    // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d.
    const address = socket.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
    if (!address) {
      socket.destroy();
      return;
    }
    connections.set(socket, { address, answered: Promise.resolve(), bodyStillArriving: false });
  });
  // A request that stalls mid-upload is given up, as Kong's nginx does (client_body_timeout).
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  // Requests Node cannot parse still get a JSON answer, as everything else does, after the
  // answers to the requests before them on the connection.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    const connection = connections.get(socket);
    // A request still arriving is the one that failed (its upload cut short, say): it is dealt
    // with now. Otherwise a later, pipelined one did, whose answer comes after the others'.
    const failedWhileArriving = connection?.request?.complete === false;
    const turn = failedWhileArriving ? Promise.resolve() : (connection?.answered ?? Promise.resolve());
    void turn.then(() => {
      // Not when the request it fails on was answered already (before its body had arrived):
      // a second answer would garble the first.
      if (error.code !== "ECONNRESET" && socket.writable && !connection?.bodyStillArriving) {
        socket.end(rawJsonResponse(clientErrorStatus(error)));
      }
      socket.destroy();
    });
  });
  // CONNECT asks for a tunnel, which the gateway never opens: a JSON answer, and the end.
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    socket.end(rawJsonResponse(405));
    socket.destroy();
  });

  const drain = async () => {
    while (answering.size > 0) await Promise.allSettled(answering);
  };

  return {
    listen: (port, host) =>
      new Promise((listening, failed) => {
        server.once("error", failed);
        server.listen(port, host, () => listening((server.address() as AddressInfo).port));
      }),
    close: async () => {
      const closed = new Promise((done) => server.close(done));
      server.closeIdleConnections();
      // Answers in progress get a moment to finish. Then every connection is cut, which also
      // ends uploads still arriving; work already handed to the database completes regardless.
      await Promise.race([drain(), delay(CLOSE_GRACE_MS)]);
      server.closeAllConnections();
      await drain();
      await closed;
    },
  };
}

/** How long a request may take to arrive in full. */
const REQUEST_TIMEOUT_MS = 60_000;

/** How long answers in progress may take to finish once the gateway closes. */
const CLOSE_GRACE_MS = 1_000;

const delay = (ms: number) => new Promise((resume) => setTimeout(resume, ms).unref());

const BAD_URL = jsonResponse(400, { message: "Bad request: malformed URL" });

/** The request target as a URL; null when Node let through one that is none (GET http://h:99999/). */
function requestUrl(target: string | undefined): URL | null {
  try {
    return new URL(target ?? "/", "http://gateway.invalid");
  } catch {
    return null;
  }
}

/** The status Node itself would answer a request it cannot parse with. */
function clientErrorStatus(error: NodeJS.ErrnoException): number {
  if (error.code === "HPE_HEADER_OVERFLOW") return 431;
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") return 408;
  return 400;
}

/** An answer written straight to a socket that never became a request. */
function rawJsonResponse(status: number): string {
  const body = JSON.stringify({ message: STATUS_CODES[status] });
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    `Content-Type: ${JSON_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Access-Control-Allow-Origin: *",
    "Connection: close",
    "",
    body,
  ].join("\r\n");
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
function withClientAddress(headers: Record<string, string>, address: string): Record<string, string> {
  const forwarded = headers["x-forwarded-for"];
  return {
    ...headers,
    "cf-connecting-ip": address,
    "x-real-ip": address,
    "x-forwarded-for": forwarded ? `${forwarded}, ${address}` : address,
  };
}

/**
 * The body's bytes, refused with 413 past `limit`. Past the limit the rest is read and dropped,
 * so the client still receives the answer and memory stays bounded. A client that goes away
 * mid-upload ends the wait at once.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  // Kong's request-size-limiting plugin's answer.
  const tooLarge = () => new ResponseError(jsonResponse(413, { message: "Request size limit exceeded" }));
  if (Number(req.headers["content-length"]) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    req.on("end", () => (size > limit ? reject(tooLarge()) : resolve(Buffer.concat(chunks))));
    // Node reports a client that hangs up mid-upload as an "aborted" error, then a close.
    req.on("error", () => reject(new ClientGoneError()));
    req.on("close", () => req.complete || reject(new ClientGoneError()));
  });
}

/** The client closed its connection before its request had arrived. */
class ClientGoneError extends Error {
  constructor() {
    super("The client went away before its request had arrived");
  }
}

function failure(error: unknown, log: (line: string) => void): HttpResponse {
  if (error instanceof ResponseError) return error.response;
  // Nobody is left to answer; the status only shows in the log line (as "client gone").
  if (error instanceof ClientGoneError) return jsonResponse(400, { message: error.message });
  log(`Unexpected error: ${error instanceof Error ? error.stack : String(error)}`);
  return postgrestError(500, "PGRSTX00", "Internal error in the local backend").response;
}
