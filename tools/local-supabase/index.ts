// The local Supabase backend: the REST calls this repository makes answered as a Supabase project
// answers them, on the Supabase CLI's address and keys, over a database it is handed (database/).
// Before PostgREST (postgrest.ts), Supabase's gateway: routes, CORS, the apikey, the body size
// limit, the client's address as Supabase's edge passes it on, and one log line per request.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { finished } from "node:stream/promises";
import { LOCAL_API_PORT, LOCAL_PUBLISHABLE_KEY } from "../../config/local-supabase.ts";
import type { Database } from "./database/database.ts";
import { LOCAL_SECRET_KEY } from "../../config/local-supabase.ts";
import { KEY_ROLES, SERVICE_ROLE } from "./keys.ts";
import { createPostgrest, jsonResponse, notImplemented, postgrestError, ResponseError } from "./postgrest.ts";
import type { HttpResponse, Postgrest } from "./postgrest.ts";

export interface LocalSupabase {
  url: string;
  /** The public key, acting as `anon`. */
  publishableKey: string;
  /** The server key, acting as `service_role`. */
  secretKey: string;
  /** Stops answering, lets requests in progress finish, then closes the database (flushing it). */
  close(): Promise<void>;
}

export interface LocalSupabaseOptions {
  /** The database to serve, already set up; the backend closes it when it closes. */
  database: Database;
  /** Default the Supabase CLI's API port; 0 picks any free port. */
  port?: number;
  host?: string;
  /** Receives one line per request (method, path, status, milliseconds); default console.log. */
  log?: (line: string) => void;
}

const REST_PREFIX = "/rest/v1/";

/** Larger bodies are refused before they are held in memory (Kong's request-size-limiting). */
export const MAX_BODY_BYTES = 1024 * 1024;

/** What PostgREST lets a browser script read from its answers (Cors.hs). */
const EXPOSED_HEADERS =
  "Content-Encoding, Content-Location, Content-Range, Content-Type, Date, Location, Server, Transfer-Encoding, Range-Unit";

// The hosted gateway's answers, word for word; hosted Supabase's answer to a secret key from a
// browser is not documented, so this one says what happened.
const refusal = (status: number, message: string, hint?: string) =>
  new ResponseError(jsonResponse(status, hint ? { message, hint } : { message }));
const MISSING_KEY = [
  "No API key found in request",
  "No `apikey` request header or url param was found.",
] as const;
const INVALID_KEY = [
  "Invalid API key",
  "Double check your Supabase `anon` or `service_role` API key.",
] as const;
const SECRET_KEY_IN_BROWSER = [
  "Forbidden use of secret API key in browser",
  "Secret API keys belong on servers; a browser uses the publishable key.",
] as const;

/** How long a request may take to arrive in full (nginx's client_body_timeout). */
const REQUEST_TIMEOUT_MS = 60_000;

/** How long answers in progress may take to finish once the backend closes. */
const CLOSE_GRACE_MS = 1_000;

/** Starts answering over `database`; closing the backend closes the database too. */
export async function startLocalSupabase({
  database,
  port = LOCAL_API_PORT,
  host = "127.0.0.1",
  log = console.log,
}: LocalSupabaseOptions): Promise<LocalSupabase> {
  const answering = new Set<Promise<void>>();
  // The client's address, read as the connection opens: a socket reset before its request is
  // handled no longer knows it, and the database's sign-up rules need it.
  const addresses = new WeakMap<Socket, string>();
  let handle: ReturnType<typeof gateway>;
  const server = createServer((req, res) => {
    const started = performance.now();
    const handled = (async () => {
      const url = URL.parse(req.url ?? "/", "http://gateway.invalid");
      const response = await handle(req, url, addresses.get(req.socket)!).catch((error: unknown) => {
        if (error instanceof ResponseError) return error.response;
        // Nobody is left to answer; the log says "client gone".
        if (!req.complete) return jsonResponse(400, { message: "The client went away" });
        log(`Unexpected error: ${error instanceof Error ? error.stack : String(error)}`);
        return postgrestError(500, "PGRSTX00", "Internal error in the local Supabase").response;
      });
      // An upload refused for its size is not read on: the connection closes after the answer.
      if (!req.complete && response.status === 413) res.shouldKeepAlive = false;
      if (!res.destroyed) {
        // Kong's cors plugin puts this on every answer, errors included, so browsers can read them.
        const length = response.status === 204 ? {} : { "Content-Length": Buffer.byteLength(response.body) };
        const cors = { "Access-Control-Allow-Origin": "*" };
        res.writeHead(response.status, { ...response.headers, ...length, ...cors });
        res.end(response.body);
      }
      // Once the answer is sent or the client has gone. The path only: the query may hold a key.
      await finished(res).catch(() => {});
      const outcome = res.writableFinished ? response.status : "client gone";
      const ms = Math.round(performance.now() - started);
      log(`${req.method} ${url?.pathname ?? "(malformed URL)"} ${outcome} ${ms}ms`);
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

  try {
    handle = gateway(await createPostgrest(database));
    await new Promise<void>((listening, failed) => {
      server.once("error", failed);
      server.listen(port, host, listening);
    });
  } catch (error) {
    await database.close();
    throw error;
  }
  const drain = async () => {
    while (answering.size > 0) await Promise.allSettled(answering);
  };
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`,
    publishableKey: LOCAL_PUBLISHABLE_KEY,
    secretKey: LOCAL_SECRET_KEY,
    close: () =>
      (closing ??= (async () => {
        const closed = new Promise((done) => server.close(done));
        server.closeIdleConnections();
        // Answers in progress get a moment; then every connection is cut, uploads included.
        // Work already handed to the database completes regardless.
        await Promise.race([drain(), new Promise((resume) => setTimeout(resume, CLOSE_GRACE_MS).unref())]);
        server.closeAllConnections();
        await drain();
        await closed;
        await database.close();
      })()),
  };
}

/** Supabase's gateway: the answer to one request, PostgREST's or its own. */
function gateway(postgrest: Postgrest) {
  return async (req: IncomingMessage, url: URL | null, address: string): Promise<HttpResponse> => {
    if (!url) throw refusal(400, "Bad request: malformed URL");
    if (!url.pathname.startsWith(REST_PREFIX)) throw refusal(404, "no Route matched with those values");
    // Kong's cors plugin answers preflights itself, before any key check: browsers send no key.
    if (req.method === "OPTIONS") {
      const requested = req.headers["access-control-request-headers"];
      const allowed = {
        "Access-Control-Allow-Methods": "GET,HEAD,PUT,PATCH,POST,DELETE,OPTIONS,TRACE,CONNECT",
      };
      const headers = requested ? { ...allowed, "Access-Control-Allow-Headers": requested } : allowed;
      return { status: 200, headers, body: "" };
    }
    const headers = withClientAddress(req, address);
    // The gateway consumes the key; PostgREST would read a leftover `apikey` as a filter.
    const role = roleOf(headers.apikey ?? url.searchParams.get("apikey"), headers);
    url.searchParams.delete("apikey");
    const path = `/${url.pathname.slice(REST_PREFIX.length)}`;
    const body = await readBody(req);
    const response = await postgrest.handle({
      method: req.method!,
      path,
      query: url.searchParams,
      headers,
      body,
      role,
    });
    // PostgREST's CORS layer adds this to answers for browsers (requests with an Origin).
    if (!req.headers.origin) return response;
    return {
      ...response,
      headers: { ...response.headers, "Access-Control-Expose-Headers": EXPOSED_HEADERS },
    };
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
  if (!apikey) throw refusal(401, ...MISSING_KEY);
  const role = KEY_ROLES.get(apikey);
  if (!role) throw refusal(401, ...INVALID_KEY);
  if (headers.authorization?.startsWith("Bearer sb_") === false) {
    throw notImplemented("A bearer token other than an API key is");
  }
  if (role === SERVICE_ROLE && fromBrowser(headers)) throw refusal(401, ...SECRET_KEY_IN_BROWSER);
  return role;
}

/**
 * Whether a request carries any sign that a browser sent it: an Origin (every cross-origin fetch
 * and every POST has one), a Fetch Metadata header only browsers send (Node's fetch sends
 * Sec-Fetch-Mode too, so that one tells nothing), or a browser's User-Agent, whatever its case.
 */
function fromBrowser(headers: Record<string, string>): boolean {
  const metadata = ["sec-fetch-site", "sec-fetch-dest", "sec-fetch-user"].some((name) => name in headers);
  return "origin" in headers || metadata || /^mozilla\//i.test(headers["user-agent"]?.trim() ?? "");
}

/**
 * The request's headers (repeated values joined, as PostgREST sees them) with the client's
 * address where Supabase's edge puts it: in `cf-connecting-ip`, and appended to
 * `x-forwarded-for`, so a client can put anything in front but never at the end. The database's
 * per-address limits read exactly these; whatever a client sent in their place counts for nothing.
 */
function withClientAddress(req: IncomingMessage, address: string): Record<string, string> {
  const headers = Object.fromEntries(
    Object.entries(req.headers).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.join(", ") : value!,
    ]),
  );
  const forwarded = headers["x-forwarded-for"];
  const xForwardedFor = forwarded ? `${forwarded}, ${address}` : address;
  return { ...headers, "cf-connecting-ip": address, "x-real-ip": address, "x-forwarded-for": xForwardedFor };
}

/**
 * The body's bytes, refused with 413 past MAX_BODY_BYTES: the rest is read and dropped, so the
 * client still receives the answer and memory stays bounded.
 */
function readBody(req: IncomingMessage): Promise<Buffer> {
  const tooLarge = () => refusal(413, "Request size limit exceeded");
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
