// The HTTP side of the local backend, shaped like Supabase's API gateway in front of PostgREST:
// its routes, its CORS answers, the apikey check, its body size limit, the client's address as
// Supabase's edge passes it on, and one log line per request.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { finished } from "node:stream/promises";
import { KEY_ROLES, SERVICE_ROLE } from "./keys.ts";
import {
  jsonResponse,
  notImplemented,
  postgrestError,
  ResponseError,
  type HttpResponse,
  type Postgrest,
} from "./postgrest.ts";

const REST_PREFIX = "/rest/v1/";

/** Larger bodies are refused before they are held in memory (Kong's request-size-limiting). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** What PostgREST lets a browser script read from its answers (Cors.hs). */
const EXPOSED_HEADERS =
  "Content-Encoding, Content-Location, Content-Range, Content-Type, Date, Location, Server, Transfer-Encoding, Range-Unit";

// The hosted gateway's answers, word for word.
const MISSING_KEY = {
  message: "No API key found in request",
  hint: "No `apikey` request header or url param was found.",
};
const INVALID_KEY = {
  message: "Invalid API key",
  hint: "Double check your Supabase `anon` or `service_role` API key.",
};
// Hosted Supabase refuses a secret key that comes from a browser. Its exact answer is not
// documented; this one says what happened.
const SECRET_KEY_IN_BROWSER = {
  message: "Forbidden use of secret API key in browser",
  hint: "Secret API keys belong on servers; a browser uses the publishable key.",
};

/** How long a request may take to arrive in full (nginx's client_body_timeout). */
const REQUEST_TIMEOUT_MS = 60_000;

/** How long answers in progress may take to finish once the gateway closes. */
const CLOSE_GRACE_MS = 1_000;

export interface Gateway {
  /** Starts answering; resolves with the port bound (useful with port 0). */
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting, lets answers in progress finish, then closes every connection. */
  close(): Promise<void>;
}

export function createGateway(postgrest: Postgrest, log: (line: string) => void): Gateway {
  async function answer(req: IncomingMessage, url: URL, address: string): Promise<HttpResponse> {
    if (!url.pathname.startsWith(REST_PREFIX))
      return jsonResponse(404, { message: "no Route matched with those values" });
    // Kong's cors plugin answers preflights itself, before any key check: browsers send no key.
    if (req.method === "OPTIONS") {
      const requested = req.headers["access-control-request-headers"];
      return {
        status: 200,
        headers: {
          "Access-Control-Allow-Methods": "GET,HEAD,PUT,PATCH,POST,DELETE,OPTIONS,TRACE,CONNECT",
          ...(requested ? { "Access-Control-Allow-Headers": requested } : {}),
        },
        body: "",
      };
    }
    const headers = withClientAddress(req, address);
    // The gateway consumes the key; PostgREST would read a leftover `apikey` as a filter.
    const role = roleOf(headers.apikey ?? url.searchParams.get("apikey"), headers);
    url.searchParams.delete("apikey");
    const response = await postgrest.handle({
      method: req.method ?? "GET",
      path: `/${url.pathname.slice(REST_PREFIX.length)}`,
      query: url.searchParams,
      headers,
      body: await readBody(req),
      role,
    });
    // PostgREST's CORS layer adds this to answers for browsers (requests with an Origin).
    if (!req.headers.origin) return response;
    return {
      ...response,
      headers: { ...response.headers, "Access-Control-Expose-Headers": EXPOSED_HEADERS },
    };
  }

  const answering = new Set<Promise<void>>();
  // The client's address, read as the connection opens: a socket reset before its request is
  // handled no longer knows it, and the database's sign-up rules need it.
  const addresses = new WeakMap<Socket, string>();
  const server = createServer((req, res) => {
    const started = performance.now();
    const handled = (async () => {
      const url = URL.parse(req.url ?? "/", "http://gateway.invalid");
      const response = await (
        url
          ? answer(req, url, addresses.get(req.socket)!)
          : Promise.resolve(jsonResponse(400, { message: "Bad request: malformed URL" }))
      ).catch((error: unknown) => {
        if (error instanceof ResponseError) return error.response;
        // Nobody is left to answer; the log says "client gone".
        if (!req.complete) return jsonResponse(400, { message: "The client went away" });
        log(`Unexpected error: ${error instanceof Error ? error.stack : String(error)}`);
        return postgrestError(500, "PGRSTX00", "Internal error in the local backend").response;
      });
      // An upload refused for its size is not read on: the connection closes after the answer.
      if (!req.complete && response.status === 413) res.shouldKeepAlive = false;
      if (!res.destroyed) {
        // Kong's cors plugin puts this on every answer, errors included, so browsers can read them.
        const length =
          response.status === 204 ? {} : { "Content-Length": String(Buffer.byteLength(response.body)) };
        res.writeHead(response.status, {
          ...response.headers,
          ...length,
          "Access-Control-Allow-Origin": "*",
        });
        res.end(response.body);
      }
      // Settles once the answer is sent or the client has gone. The path only: the query
      // string may carry an apikey.
      await finished(res).catch(() => {});
      const outcome = res.writableFinished ? String(response.status) : "client gone";
      log(
        `${req.method} ${url?.pathname ?? "(malformed URL)"} ${outcome} ${Math.round(performance.now() - started)}ms`,
      );
    })().finally(() => answering.delete(handled));
    answering.add(handled);
  });
  server.on("connection", (socket: Socket) => {
    // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d.
    const address = socket.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
    if (address) addresses.set(socket, address);
    else socket.destroy();
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;

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
      // Answers in progress get a moment; then every connection is cut, uploads included. Work
      // already handed to the database completes regardless.
      await Promise.race([drain(), new Promise((resume) => setTimeout(resume, CLOSE_GRACE_MS).unref())]);
      server.closeAllConnections();
      await drain();
      await closed;
    },
  };
}

/**
 * The role a key stands for, as the CLI's gateway maps it (kong.yml): the apikey must be one of
 * the local keys. supabase-js copies it into `Authorization`, where the gateway drops an opaque
 * key (`Bearer sb_…`); a user's JWT there is not implemented. Nothing that acts as service_role
 * is taken from a browser: the local keys are public, and a page a developer visits must not
 * read or delete the list.
 */
function roleOf(apikey: string | null, headers: Record<string, string>): string {
  if (!apikey) throw new ResponseError(jsonResponse(401, MISSING_KEY));
  const role = KEY_ROLES.get(apikey);
  if (!role) throw new ResponseError(jsonResponse(401, INVALID_KEY));
  if (headers.authorization !== undefined && !headers.authorization.startsWith("Bearer sb_")) {
    throw notImplemented("A bearer token other than an API key is");
  }
  if (role === SERVICE_ROLE && fromBrowser(headers))
    throw new ResponseError(jsonResponse(401, SECRET_KEY_IN_BROWSER));
  return role;
}

/**
 * Whether a request carries any sign that a browser sent it: an Origin (every cross-origin fetch
 * and every POST has one), a Fetch Metadata header only browsers send (Node's fetch sends
 * Sec-Fetch-Mode too, so that one tells nothing), or a browser's User-Agent, whatever its case.
 */
function fromBrowser(headers: Record<string, string>): boolean {
  return (
    headers.origin !== undefined ||
    ["sec-fetch-site", "sec-fetch-dest", "sec-fetch-user"].some((name) => headers[name] !== undefined) ||
    /^mozilla\//i.test(headers["user-agent"]?.trim() ?? "")
  );
}

/**
 * The request's headers (repeated values joined, as PostgREST sees them) with the client's
 * address where Supabase's edge puts it: in `cf-connecting-ip`, and appended to
 * `x-forwarded-for`, so a client can put anything in front but never at the end. The database's
 * per-address limits read exactly these; whatever a client sent in their place counts for nothing.
 */
function withClientAddress(req: IncomingMessage, address: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  const forwarded = headers["x-forwarded-for"];
  return {
    ...headers,
    "cf-connecting-ip": address,
    "x-real-ip": address,
    "x-forwarded-for": forwarded ? `${forwarded}, ${address}` : address,
  };
}

/**
 * The body's bytes, refused with 413 past MAX_BODY_BYTES: the rest is read and dropped, so the
 * client still receives the answer and memory stays bounded.
 */
function readBody(req: IncomingMessage): Promise<Buffer> {
  const tooLarge = () => new ResponseError(jsonResponse(413, { message: "Request size limit exceeded" }));
  if (Number(req.headers["content-length"]) > MAX_BODY_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () => (size > MAX_BODY_BYTES ? reject(tooLarge()) : resolve(Buffer.concat(chunks))));
    // A client that hangs up mid-upload: nobody is left to answer.
    req.on("error", reject);
    req.on("close", () => req.complete || reject(new Error("The client went away")));
  });
}
