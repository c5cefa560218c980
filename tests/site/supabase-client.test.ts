// @vitest-environment jsdom
// The page's Supabase client (src/lib/supabase-client.ts) is supabase-js's own, set up as the page
// needs it: a sign-up is supabase-js's request, as a browser sends it, whatever the page's address
// holds; and a session, were one ever made, is kept in local storage and refreshed unasked. In a
// simulated DOM, so that supabase-js takes itself for a browser, against one HTTP server of the
// test's own that records every request and answers as PostgREST and Supabase Auth would.
import { version } from "@supabase/supabase-js/package.json";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { register, type Outcome } from "../../src/lib/sign-up-request";
import { createClient } from "../../src/lib/supabase-client";

const KEY = "sb_publishable_test-key";

interface Recorded {
  method?: string;
  url?: string;
  headers: IncomingMessage["headers"];
  body: string;
}

const recorded: Recorded[] = [];
/** What the server answers a sign-up with next: one of PostgREST's answers. */
let signUpReply = { status: 201, body: "[]" };
/** What the server answers a token refresh with: Supabase Auth's new session. */
const refreshed = {
  access_token: "access-token-2",
  refresh_token: "refresh-token-2",
  token_type: "bearer",
  expires_in: 3600,
  user: { id: "00000000-0000-4000-8000-000000000001", aud: "authenticated", role: "authenticated" },
};

const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  let body = "";
  request.on("data", (chunk: Buffer) => (body += chunk.toString()));
  request.on("end", () => {
    recorded.push({ method: request.method, url: request.url, headers: request.headers, body });
    const reply = request.url?.startsWith("/rest/v1/")
      ? signUpReply
      : request.url === "/auth/v1/token?grant_type=refresh_token"
        ? { status: 200, body: JSON.stringify(refreshed) }
        : { status: 404, body: "{}" };
    response.writeHead(reply.status, { "content-type": "application/json; charset=utf-8" });
    response.end(reply.body);
  });
});

let port = 0;
beforeAll(async () => {
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((closed) => server.close(() => closed())));

describe("a sign-up through the page's client", () => {
  // A link to the page that carries a session, as Supabase Auth's sign-in redirects do.
  const linkedSession = "#access_token=someone-else&refresh_token=theirs&expires_in=3600&token_type=bearer";
  let client: ReturnType<typeof createClient>;
  beforeAll(() => {
    window.location.hash = linkedSession;
    client = createClient(`http://127.0.0.1:${port}`, KEY);
  });
  afterAll(async () => {
    await client.auth.stopAutoRefresh();
    window.location.hash = "";
  });

  it.each<{ answer: string; reply: { status: number; body: string }; outcome: Outcome }>([
    {
      answer: "the row",
      reply: {
        status: 201,
        body: '[{"id":1,"email":"ada@example.com","phone":null,"created_at":"2026-11-25T10:00:00+00:00"}]',
      },
      outcome: "registered",
    },
    {
      answer: "a duplicate",
      reply: {
        status: 409,
        body: '{"code":"23505","details":null,"hint":null,"message":"duplicate key value violates unique constraint \\"early_access_email_key\\""}',
      },
      outcome: "duplicate",
    },
    {
      answer: "the per-address limit",
      reply: {
        status: 429,
        body: '{"code":"PT429","details":null,"hint":null,"message":"Too many sign-ups"}',
      },
      outcome: "failed",
    },
    {
      answer: "a gateway's HTML page",
      reply: { status: 502, body: "<html>Bad gateway</html>" },
      outcome: "failed",
    },
  ])(
    "is supabase-js's request, as a browser sends it; $answer in answer is $outcome",
    async ({ reply, outcome }) => {
      signUpReply = reply;
      recorded.length = 0;
      expect(await register(async () => client, { email: "ada@example.com", phone: null })).toBe(outcome);

      // One request: the token in the page's address was neither checked nor used.
      expect(recorded).toHaveLength(1);
      const [request] = recorded;
      expect(request).toMatchObject({ method: "POST", url: "/rest/v1/early_access?select=*" });
      expect(JSON.parse(request!.body)).toEqual({ email: "ada@example.com", phone: null });
      expect(request!.headers).toMatchObject({
        // supabase-js names itself, by the version installed, and took itself for a browser.
        "x-client-info": `supabase-js/${version}; platform=browser`,
        apikey: KEY,
        // No session: the key is the token, and the request runs as `anon`.
        authorization: `Bearer ${KEY}`,
        "content-type": "application/json",
        "content-profile": "public",
        prefer: "return=representation",
      });
    },
  );
});

describe("a session of the page's client", () => {
  // Where supabase-js keeps a project's session: by the first label of its host name.
  const STORAGE_KEY = "sb-localhost-auth-token";
  const stored = () => JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "null") as { access_token?: string };

  it("is read from local storage, refreshed unasked before it expires, and stored again", async () => {
    recorded.length = 0;
    // A session as supabase-js stores it, 100 s from its expiry: past the margin within which
    // supabase-js refreshes at start-up, within the one of its refresh timer.
    localStorage.setItem(
      STORAGE_KEY,
      JSON.stringify({
        access_token: "access-token-1",
        refresh_token: "refresh-token-1",
        token_type: "bearer",
        expires_in: 3600,
        expires_at: Math.floor(Date.now() / 1000) + 100,
        user: refreshed.user,
      }),
    );
    const client = createClient(`http://localhost:${port}`, KEY);
    try {
      await vi.waitFor(() => expect(stored().access_token).toBe("access-token-2"));
      expect(recorded).toHaveLength(1);
      expect(recorded[0]).toMatchObject({
        method: "POST",
        url: "/auth/v1/token?grant_type=refresh_token",
        body: JSON.stringify({ refresh_token: "refresh-token-1" }),
      });
    } finally {
      await client.auth.stopAutoRefresh();
      localStorage.removeItem(STORAGE_KEY);
    }
  });
});
