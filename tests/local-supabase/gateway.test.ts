// What Supabase's gateway does in front of PostgREST: the apikey check and the role it gives,
// CORS for browsers, unknown routes, the body size limit, and one log line per request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BODY_BYTES, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { LEGACY_ANON_KEY } from "../support/legacy-keys.ts";
import { clientFor, rest, signUpOverHttp, startTestSupabase, uniqueEmail } from "../support/database.ts";

let backend: LocalSupabase;
const logLines: string[] = [];
beforeAll(async () => {
  backend = await startTestSupabase({ log: (line) => logLines.push(line) });
});
afterAll(() => backend.close());

const INVALID_KEY = {
  message: "Invalid API key",
  hint: "Double check your Supabase `anon` or `service_role` API key.",
};

describe("the apikey", () => {
  it("is required", async () => {
    const response = await signUpOverHttp(backend, uniqueEmail(), { key: null });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      message: "No API key found in request",
      hint: "No `apikey` request header or url param was found.",
    });
  });

  it.each([
    // Not a key at all.
    ["garbage", () => "not-a-key"],
    // A real key cut short.
    ["truncated", () => backend.secretKey.slice(0, -4)],
    // The Supabase CLI's legacy anon JWT, which this repository never sends.
    ["a legacy JWT", () => LEGACY_ANON_KEY],
  ])("is refused when %s, through supabase-js", async (_, key) => {
    const answer = await clientFor(backend, key())
      .from("early_access")
      .insert({ email: uniqueEmail() })
      .select();
    expect(answer.status).toBe(401);
    expect(answer.error).toEqual(INVALID_KEY);
  });

  it("may come as a url parameter, which is not taken for a filter", async () => {
    const response = await fetch(
      `${backend.url}/rest/v1/early_access?apikey=${backend.secretKey}&select=email`,
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(expect.any(Array));
  });

  it("gives its role when no bearer token is sent", async () => {
    const email = uniqueEmail();
    await signUpOverHttp(backend, email);
    const response = await fetch(`${backend.url}/rest/v1/early_access?email=eq.${email}`, {
      headers: { apikey: backend.secretKey },
    });
    expect(await response.json()).toHaveLength(1);
  });
});

describe("today's opaque keys, mapped as the Supabase CLI's gateway maps them", () => {
  it("the publishable key signs up through supabase-js and reads back the row", async () => {
    const email = uniqueEmail();
    const answer = await clientFor(backend, backend.publishableKey)
      .from("early_access")
      .insert({ email })
      .select();
    expect(answer.status).toBe(201);
    expect(answer.data).toEqual([expect.objectContaining({ email, phone: null })]);
  });

  it("the publishable key acts as anon: it cannot list the sign-ups", async () => {
    const answer = await clientFor(backend, backend.publishableKey).from("early_access").select();
    expect(answer.status).toBe(401);
    expect(answer.error?.code).toBe("42501");
  });

  it("the secret key acts as service_role: it lists the sign-ups through supabase-js", async () => {
    const email = uniqueEmail();
    await clientFor(backend, backend.publishableKey).from("early_access").insert({ email });
    const answer = await clientFor(backend, backend.secretKey).from("early_access").select("email");
    expect(answer.status).toBe(200);
    expect(answer.data).toContainEqual({ email });
  });

  it("the secret key works as a url parameter too", async () => {
    const response = await fetch(
      `${backend.url}/rest/v1/early_access?apikey=${backend.secretKey}&select=email`,
    );
    expect(response.status).toBe(200);
    expect((await response.json()).length).toBeGreaterThan(0);
  });

  const CHROME =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
  // What a page's fetch() carries, sign by sign: any one of them marks a browser.
  const BROWSER_SIGNS: Array<[string, Record<string, string>]> = [
    ["a browser's User-Agent", { "user-agent": CHROME }],
    ["a browser's User-Agent in lower case", { "user-agent": CHROME.toLowerCase() }],
    ["an Origin, with no User-Agent", { origin: "https://attacker.example", "user-agent": "" }],
    ["Sec-Fetch-Site", { "sec-fetch-site": "cross-site", "user-agent": "" }],
    ["Sec-Fetch-Dest", { "sec-fetch-dest": "empty", "user-agent": "" }],
  ];

  it.each(BROWSER_SIGNS)("refuses the secret key from a browser: %s", async (_, browser) => {
    for (const call of [{ key: backend.secretKey }, { key: null, headers: { apikey: backend.secretKey } }]) {
      const response = await rest(backend, { ...call, headers: { ...call.headers, ...browser } });
      expect(response.status).toBe(401);
      expect((await response.json()).message).toBe("Forbidden use of secret API key in browser");
    }
    // The publishable key is meant for browsers.
    expect((await signUpOverHttp(backend, uniqueEmail(), { headers: browser })).status).toBe(201);
  });

  it("takes the secret key from a server's fetch, whose only Fetch Metadata is Sec-Fetch-Mode", async () => {
    // Node's fetch (and so supabase-js on a server) sends `sec-fetch-mode: cors` and `user-agent: node`.
    const response = await fetch(`${backend.url}/rest/v1/early_access?select=email`, {
      headers: { apikey: backend.secretKey },
    });
    expect(response.status).toBe(200);
  });

  it.each([
    // Shaped like a publishable key, but not this project's.
    ["another publishable key", "sb_publishable_NotThisProjectsKey0000000_0000000"],
    // Shaped like a secret key, but not this project's.
    ["another secret key", "sb_secret_NotThisProjectsKey000000_000000000"],
  ])("refuses %s as an invalid API key", async (_, key) => {
    const answer = await clientFor(backend, key)
      .from("early_access")
      .insert({ email: uniqueEmail() })
      .select();
    expect(answer.status).toBe(401);
    expect(answer.error).toEqual(INVALID_KEY);
  });

  it("drops an opaque key sent as the bearer token: the apikey decides the role", async () => {
    // The secret key as bearer token beside the publishable apikey gains nothing: anon may not read.
    const response = await rest(backend, {
      key: null,
      headers: { apikey: backend.publishableKey, authorization: `Bearer ${backend.secretKey}` },
    });
    expect(response.status).toBe(401);
    expect((await response.json()).code).toBe("42501");
  });

  it("refuses a bearer token that is no key (a user's JWT) as not implemented", async () => {
    const response = await signUpOverHttp(backend, uniqueEmail(), {
      key: null,
      headers: { apikey: backend.publishableKey, authorization: `Bearer ${LEGACY_ANON_KEY}` },
    });
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe("PGRST127");
  });
});

describe("CORS", () => {
  it("answers the browser's preflight before any key check", async () => {
    const requested = "apikey,authorization,content-profile,content-type,prefer,x-client-info";
    const response = await fetch(`${backend.url}/rest/v1/early_access?select=*`, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:4321",
        "access-control-request-method": "POST",
        "access-control-request-headers": requested,
      },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("access-control-allow-headers")).toBe(requested);
    expect(response.headers.get("access-control-allow-methods")).toBe(
      "GET,HEAD,PUT,PATCH,POST,DELETE,OPTIONS,TRACE,CONNECT",
    );
    expect(response.headers.get("access-control-max-age")).toBeNull();
    expect(await response.text()).toBe("");
  });

  it.each([
    // Refused by the gateway.
    ["a missing key", uniqueEmail(), { key: null }, 401],
    // Refused by the database.
    ["a duplicate", "twice@example.com", {}, 409],
  ])("lets a browser read the answer to %s", async (_, email, call, status) => {
    await signUpOverHttp(backend, email, call);
    const response = await signUpOverHttp(backend, email, {
      ...call,
      headers: { origin: "http://localhost:4321" },
    });
    expect(response.status).toBe(status);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("exposes PostgREST's headers to browsers", async () => {
    const response = await signUpOverHttp(backend, uniqueEmail(), {
      headers: { origin: "http://localhost:4321" },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("access-control-expose-headers")).toBe(
      "Content-Encoding, Content-Location, Content-Range, Content-Type, Date, Location, Server, Transfer-Encoding, Range-Unit",
    );
  });
});

describe("routes", () => {
  it.each(["/", "/auth/v1/user", "/rest/v2/early_access"])(
    "answers %s outside /rest/v1 as the gateway does",
    async (path) => {
      const response = await fetch(`${backend.url}${path}`, { headers: { apikey: backend.publishableKey } });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ message: "no Route matched with those values" });
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
    },
  );

  it("refuses filters it does not implement instead of ignoring them", async () => {
    const response = await rest(backend, {
      path: "early_access?email=like.*example.com",
      key: backend.secretKey,
    });
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe("PGRST127");
  });
});

describe("the body size limit", () => {
  const oversized = JSON.stringify({ email: uniqueEmail(), phone: "x".repeat(MAX_BODY_BYTES) });

  it("refuses an oversized body announced by Content-Length", async () => {
    const response = await rest(backend, { method: "POST", key: backend.secretKey, body: oversized });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ message: "Request size limit exceeded" });
  });

  it("refuses an oversized body sent in chunks", async () => {
    const chunks = new Blob([oversized]).stream();
    const response = await fetch(`${backend.url}/rest/v1/early_access`, {
      method: "POST",
      headers: { apikey: backend.secretKey, "content-type": "application/json" },
      body: chunks,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
  });
});

describe("the log", () => {
  it("has one line per request: method, path, status, milliseconds", async () => {
    await rest(backend, { path: "early_access?select=email", key: backend.secretKey });
    expect(logLines.at(-1)).toMatch(/^GET \/rest\/v1\/early_access 200 \d+ms$/);
  });

  it("never shows a key passed in the url", async () => {
    await fetch(`${backend.url}/rest/v1/early_access?apikey=${backend.secretKey}`);
    expect(logLines.at(-1)).toMatch(/^GET \/rest\/v1\/early_access 200 \d+ms$/);
    expect(logLines.join("\n")).not.toContain(backend.secretKey);
  });
});
