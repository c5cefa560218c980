// What every stand-in of a host's API shares: a local HTTP server on a free port of its own, that
// records every call (method, path and query, the bearer token) and answers through its host's
// routes. A call no route answers gets 404 and stays in the record as such, so a test shows what a
// new CLI version asks that the stand-in does not know.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface Call {
  method: string;
  /** The path and query, as sent. */
  path: string;
  token: string | undefined;
  /** The status the stand-in answered. */
  status: number;
}

export interface Request {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  token: string | undefined;
  body: Buffer;
}

export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ApiServer {
  /** http://127.0.0.1:<port> */
  url: string;
  calls: Call[];
  close(): Promise<void>;
}

/** Starts a stand-in answering each request with `route`'s answer (undefined: 404). */
export async function startApiServer(
  route: (request: Request) => Answer | undefined | Promise<Answer | undefined>,
): Promise<ApiServer> {
  const calls: Call[] = [];
  const server = createServer(async (incoming, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const token = incoming.headers.authorization?.replace(/^Bearer /i, "");
    const request: Request = {
      method: incoming.method!,
      url: new URL(incoming.url!, "http://stand-in"),
      headers: incoming.headers,
      token,
      body: Buffer.concat(chunks),
    };
    let answer: Answer;
    try {
      answer = (await route(request)) ?? { status: 404, body: { message: "not emulated by the stand-in" } };
    } catch (error) {
      answer = { status: 500, body: { message: `the stand-in failed: ${(error as Error).message}` } };
    }
    calls.push({ method: request.method, path: incoming.url!, token, status: answer.status });
    const json = answer.body === undefined ? "" : JSON.stringify(answer.body);
    response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers }).end(json);
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

/** A request's multipart body, as the CLI sent it. */
export function formData(request: Request): Promise<FormData> {
  return new Response(new Uint8Array(request.body), {
    headers: { "content-type": String(request.headers["content-type"]) },
  }).formData();
}

/**
 * How a stand-in fails half-way, as a test asks: it accepts the next `count` file uploads, then
 * refuses each (`failAfter(undefined)`: accepts all again).
 */
export function uploadGate() {
  let accepted = 0;
  let upTo = Infinity;
  return {
    /** Whether to accept this upload. */
    accepts(): boolean {
      if (accepted >= upTo) return false;
      accepted += 1;
      return true;
    },
    failAfter(count: number | undefined): void {
      upTo = count === undefined ? Infinity : accepted + count;
    },
  };
}
