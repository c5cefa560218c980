// The sign-up's client (src/lib/supabase-client.ts) against supabase-js itself: the same sign-up
// through each, to one recording HTTP server, must be the same request on the wire (method, path,
// every header in order, body) and come back as the same answer. In a simulated DOM, so that
// supabase-js, too, takes itself for a browser.
import { createClient as createSupabaseJs, type SupabaseClient } from "@supabase/supabase-js";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/lib/supabase-client";

const KEY = "sb_publishable_test-key";

interface Recorded {
  method?: string;
  url?: string;
  headers: string[];
  body: string;
}

const recorded: Recorded[] = [];
/** What the server answers next: PostgREST's answers to a sign-up. */
let reply: { status: number; body: string } = { status: 201, body: "[]" };

const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  let body = "";
  request.on("data", (chunk: Buffer) => (body += chunk.toString()));
  request.on("end", () => {
    // Where the request came from differs by nature (the port), nothing else may.
    const headers = request.rawHeaders.filter((_, i, all) => !/^host$/i.test(all[i - (i % 2)]!));
    recorded.push({ method: request.method, url: request.url, headers, body });
    response.writeHead(reply.status, { "content-type": "application/json; charset=utf-8" });
    response.end(reply.body);
  });
});

let url = "";
beforeAll(async () => {
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((closed) => server.close(() => closed())));

/** supabase-js, as the site used to create it, once per project (it warns about a second one). */
const supabaseJs = new Map<string, SupabaseClient>();
const theirClient = (projectUrl: string) => {
  if (!supabaseJs.has(projectUrl))
    supabaseJs.set(
      projectUrl,
      createSupabaseJs(projectUrl, KEY, { auth: { persistSession: true, autoRefreshToken: true } }),
    );
  return supabaseJs.get(projectUrl)!;
};

/** The sign-up the page sends (src/lib/sign-up-request.ts), through supabase-js and through ours. */
async function bothWays(projectUrl: string, row: { email: string; phone: string | null }) {
  recorded.length = 0;
  const signal = new AbortController().signal;
  const theirs = await theirClient(projectUrl).from("early_access").insert(row).select().abortSignal(signal);
  const ours = await createClient(projectUrl, KEY)
    .from("early_access")
    .insert(row)
    .select()
    .abortSignal(signal);
  expect(recorded).toHaveLength(2);
  return { requests: recorded.slice(), theirs, ours };
}

describe("a sign-up through the site's client and through supabase-js", () => {
  const answers = [
    {
      status: 201,
      body: '[{"id":1,"email":"ada@example.com","phone":null,"created_at":"2026-11-25T10:00:00+00:00"}]',
    },
    {
      status: 409,
      body: '{"code":"23505","details":null,"hint":null,"message":"duplicate key value violates unique constraint \\"early_access_email_key\\""}',
    },
    { status: 429, body: '{"code":"PT429","details":null,"hint":null,"message":"Too many sign-ups"}' },
    { status: 502, body: "<html>Bad gateway</html>" },
  ];

  it.each(answers)(
    "is the same request, and the same answer, when PostgREST answers $status",
    async (answer) => {
      reply = answer;
      const { requests, theirs, ours } = await bothWays(url, { email: "ada@example.com", phone: null });
      expect(requests[1]).toEqual(requests[0]);
      expect(requests[0]).toMatchObject({ method: "POST", url: "/rest/v1/early_access?select=*" });
      // supabase-js took itself for a browser, so this is the browser's request.
      const clientInfo = requests[0]!.headers.findIndex((name) => /^x-client-info$/i.test(name));
      expect(requests[0]!.headers[clientInfo + 1]).toMatch(/^supabase-js\/[\d.]+; platform=browser$/);
      expect(ours).toEqual(theirs);
    },
  );

  it("is the same request for a project under a path, with or without its trailing slash", async () => {
    reply = answers[0]!;
    for (const projectUrl of [`${url}/project`, `${url}/project/`]) {
      const { requests } = await bothWays(projectUrl, { email: "ada@example.com", phone: "+1 555 0100" });
      expect(requests[1]).toEqual(requests[0]);
      expect(requests[0]!.url).toBe("/project/rest/v1/early_access?select=*");
    }
  });
});
