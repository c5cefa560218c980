// Bad input gets a client error, never a 5xx, and the API keeps answering afterwards: bodies not
// UTF-8 or of another media type, URLs that are none, requests Node's own parser refuses, and
// unfiltered writes.
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSupabase } from "../../tools/local-supabase/index.ts";
import { clientFor, rest, startTestSupabase, uniqueEmail } from "../support/database.ts";

let backend: LocalSupabase;
beforeAll(async () => {
  backend = await startTestSupabase();
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

/** A raw HTTP exchange on its own socket: what the server writes back until it closes. */
function rawExchange(request: string): Promise<string> {
  const { hostname, port } = new URL(backend.url);
  return new Promise((resolve, reject) => {
    let answer = "";
    const socket = connect(Number(port), hostname, () => socket.write(request));
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
    socket.setTimeout(20_000, () => reject(new Error(`no answer; so far: ${answer}`)));
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

describe("the body's media type", () => {
  it.each(["application/json", "application/json; charset=utf-8"])(
    "%s is read as JSON",
    async (contentType) => {
      const response = await post(JSON.stringify({ email: uniqueEmail() }), { "content-type": contentType });
      expect(response.status).toBe(201);
    },
  );

  it("none at all is read as JSON, as PostgREST does", async () => {
    // fetch would label a string body text/plain; a byte array goes out unlabelled.
    const response = await post(new TextEncoder().encode(JSON.stringify({ email: uniqueEmail() })));
    expect(response.status).toBe(201);
  });

  it.each(["text/plain", "text/csv", "application/x-www-form-urlencoded"])(
    "%s is refused as not implemented",
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
    ["a malformed request line", "NOT HTTP AT ALL\r\n\r\n", "HTTP/1.1 400 Bad Request"],
    [
      "headers past Node's limit",
      `GET /rest/v1/early_access HTTP/1.1\r\nHost: h\r\nX-Big: ${"x".repeat(20_000)}\r\n\r\n`,
      "HTTP/1.1 431 Request Header Fields Too Large",
    ],
    ["a CONNECT", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", ""],
  ])("gets Node's own client error, or none, and the connection closed: %s", async (_, request, status) => {
    expect(statusLine(await rawExchange(request))).toBe(status);
    await stillSignsUp();
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
