// Every request gets an answer, as PostgREST behind Supabase's gateway gives it, and the API
// keeps answering afterwards: bodies nested too deep, not UTF-8, or of another media type,
// malformed request lines, requests Node's own parser refuses, and unfiltered writes.
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../../server/local-supabase/index.ts";
import { clientFor, rest, startTestBackend, uniqueEmail } from "./helpers.ts";

let backend: Backend;
beforeAll(async () => {
  backend = await startTestBackend();
});
afterAll(() => backend.close());

async function stillSignsUp() {
  const answer = await clientFor(backend, backend.publishableKey)
    .from("early_access")
    .insert({ email: uniqueEmail("after") })
    .select();
  expect(answer.status, "the API keeps answering").toBe(201);
}

const post = (body: BodyInit, headers: Record<string, string> = {}) =>
  fetch(`${backend.url}/rest/v1/early_access?select=*`, {
    method: "POST",
    headers: {
      apikey: backend.publishableKey,
      authorization: `Bearer ${backend.publishableKey}`,
      prefer: "return=representation",
      ...headers,
    },
    body,
  });

/**
 * A raw HTTP exchange on its own socket: what the server writes back until it closes. With
 * `stopSendingAfterMs`, the client then stops sending (half-closes), as an upload cut short does.
 */
function rawExchange(request: string, { stopSendingAfterMs = -1 } = {}): Promise<string> {
  const { hostname, port } = new URL(backend.url);
  return new Promise((resolve, reject) => {
    let answer = "";
    const socket = connect(Number(port), hostname, () => {
      socket.write(request);
      if (stopSendingAfterMs >= 0) setTimeout(() => socket.end(), stopSendingAfterMs);
    });
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
    socket.setTimeout(5_000, () => reject(new Error(`no answer; so far: ${answer}`)));
  });
}

const statusLine = (answer: string) => answer.split("\r\n")[0];
const jsonBody = (answer: string) => JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));

describe("a body that is not UTF-8", () => {
  it("is refused with PostgREST's 400, not stored with U+FFFD in its place", async () => {
    const email = uniqueEmail("bytes");
    const [local, domain] = email.split("@") as [string, string];
    const body = Buffer.concat([
      Buffer.from(`{"email":"${local}`),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(`@${domain}"}`),
    ]);
    const response = await post(body, { "content-type": "application/json" });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: "PGRST102",
      details: null,
      hint: null,
      message: "Empty or invalid json",
    });
    await stillSignsUp();
  });
});

describe("the body's media type, as PostgREST reads it", () => {
  it.each([
    // What supabase-js sends.
    ["application/json", 201],
    ["application/json; charset=utf-8", 201],
    // PostgREST's own name for a JSON array.
    ["application/vnd.pgrst.array+json", 201],
  ])("%s is read as JSON", async (contentType, status) => {
    const response = await post(JSON.stringify({ email: uniqueEmail() }), { "content-type": contentType });
    expect(response.status).toBe(status);
  });

  it("none at all is read as JSON, as PostgREST does", async () => {
    // fetch would label a string body text/plain; a byte array goes out unlabelled.
    const response = await post(new TextEncoder().encode(JSON.stringify({ email: uniqueEmail() })));
    expect(response.status).toBe(201);
  });

  it.each([
    ["text/plain", "Content-Type not acceptable: text/plain"],
    ["text/plain; charset=utf-8", "Content-Type not acceptable: text/plain"],
    ["application/xml", "Content-Type not acceptable: application/xml"],
    ["application/octet-stream", "Content-Type not acceptable: application/octet-stream"],
  ])("%s is refused with 400 PGRST102", async (contentType, message) => {
    const response = await post(JSON.stringify({ email: uniqueEmail() }), { "content-type": contentType });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ code: "PGRST102", details: null, hint: null, message });
  });

  it.each(["text/csv", "application/x-www-form-urlencoded"])(
    "%s, which PostgREST reads but the local backend does not, is refused as not implemented",
    async (contentType) => {
      const response = await post("email\nsomeone@example.com", { "content-type": contentType });
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe("PGRST127");
    },
  );
});

describe("a request Node can parse but whose URL is none", () => {
  it("gets a 400 JSON answer instead of a socket left open", async () => {
    const answer = await rawExchange(
      "GET http://h:99999/rest/v1/early_access HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
    );
    expect(statusLine(answer)).toBe("HTTP/1.1 400 Bad Request");
    expect(jsonBody(answer)).toEqual({ message: "Bad request: malformed URL" });
    await stillSignsUp();
  });
});

describe("a request Node's own parser refuses", () => {
  it.each([
    ["a malformed request line", "NOT HTTP AT ALL\r\n\r\n", "HTTP/1.1 400 Bad Request", "Bad Request"],
    [
      "headers past Node's limit",
      `GET /rest/v1/early_access HTTP/1.1\r\nHost: h\r\nX-Big: ${"x".repeat(20_000)}\r\n\r\n`,
      "HTTP/1.1 431 Request Header Fields Too Large",
      "Request Header Fields Too Large",
    ],
  ])("gets a JSON answer: %s", async (_, request, status, message) => {
    const answer = await rawExchange(request);
    expect(statusLine(answer)).toBe(status);
    expect(answer).toContain("Content-Type: application/json; charset=utf-8");
    expect(jsonBody(answer)).toEqual({ message });
    await stillSignsUp();
  });
});

describe("an upload cut short after the answer", () => {
  it("gets that one answer, not a second one from the parser", async () => {
    // No key, so the gateway answers 401 before the announced body has arrived; then the client
    // stops sending, and Node's parser reports the body it will never get.
    const answer = await rawExchange(
      "POST /rest/v1/early_access HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n" +
        'Content-Length: 100\r\n\r\n{"email":',
      { stopSendingAfterMs: 300 },
    );
    expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 401"]);
    expect(statusLine(answer)).toBe("HTTP/1.1 401 Unauthorized");
  });
});

describe("a connection kept alive", () => {
  const get = `GET /rest/v1/early_access HTTP/1.1\r\nHost: h\r\napikey: LOCAL_KEY\r\n\r\n`;

  it("answers a malformed request after an answered one with JSON, after that answer", async () => {
    // Sent together (pipelined): the answer to the first comes first, then the second's error.
    const answer = await rawExchange(get.replace("LOCAL_KEY", backend.publishableKey) + "GARBAGE\r\n\r\n", {
      stopSendingAfterMs: 500,
    });
    expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 200", "HTTP/1.1 400"]);
    expect(answer.endsWith('{"message":"Bad Request"}')).toBe(true);
  });

  it("answers a malformed request after one answered before its body had arrived", async () => {
    // No key: 401 before the body; then the body arrives in full, then a malformed request.
    const body = JSON.stringify({ email: uniqueEmail() });
    const first =
      "POST /rest/v1/early_access HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n" +
      `Content-Length: ${body.length}\r\n\r\n`;
    const { hostname, port } = new URL(backend.url);
    const answer = await new Promise<string>((resolve, reject) => {
      let received = "";
      const socket = connect(Number(port), hostname, () => socket.write(first));
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => {
        received += chunk;
        // The 401 is in: now the rest of the first request, then garbage.
        if (received.includes("No API key found") && !received.includes("HTTP/1.1 400")) {
          socket.write(body);
          setTimeout(() => socket.write("GARBAGE\r\n\r\n"), 100);
        }
      });
      socket.on("end", () => resolve(received));
      socket.on("error", reject);
      socket.setTimeout(5_000, () => reject(new Error(`no answer; so far: ${received}`)));
    });
    expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 401", "HTTP/1.1 400"]);
    expect(answer.endsWith('{"message":"Bad Request"}')).toBe(true);
  });
});

describe("CONNECT", () => {
  it("is answered with JSON, and the connection closed, never opening a tunnel", async () => {
    const answer = await rawExchange("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
    expect(statusLine(answer)).toBe("HTTP/1.1 405 Method Not Allowed");
    expect(jsonBody(answer)).toEqual({ message: "Method Not Allowed" });
  });
});

describe("a DELETE without a filter", () => {
  it("is refused as Supabase refuses it, even with the secret key", async () => {
    const email = uniqueEmail();
    await rest(backend, { method: "POST", body: JSON.stringify({ email }) });
    const response = await rest(backend, { method: "DELETE", key: backend.secretKey });

    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      code: "21000",
      details: null,
      hint: null,
      message: "DELETE requires a WHERE clause",
    });
    const { data } = await clientFor(backend, backend.secretKey)
      .from("early_access")
      .select("phone")
      .eq("email", email);
    expect(data).toEqual([{ phone: null }]);
  });
});
