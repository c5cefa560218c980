// What the benches send: sign-ups as the site's supabase-js sends them, handed to the local
// endpoint's PostgREST pipeline, and a steady pace of them (bench:rules; bench:flood, from its own
// thread and from the flooding client's, flood-client.ts).
import { setTimeout as sleep } from "node:timers/promises";
import { threadId } from "node:worker_threads";
import type { Postgrest } from "../tools/local-supabase/postgrest.ts";

export const random = (below: number) => Math.floor(Math.random() * below);
export const randomAddress = () => `${1 + random(223)}.${random(256)}.${random(256)}.${1 + random(254)}`;
let emails = 0;
/** An address no other request of the bench sends, whichever thread sends it. */
export const newEmail = () => `bench-${threadId}-${emails++}-${random(1e9)}@example.com`;

/** A sign-up as the site sends it (no phone), from `address`; or another body, query and Prefer. */
export function signUpRequest(
  address: string,
  {
    body = { email: newEmail(), phone: null } as unknown,
    query = "select=*",
    prefer = "return=representation",
  } = {},
) {
  return {
    method: "POST",
    path: "/early_access",
    query: new URLSearchParams(query),
    headers: {
      apikey: "sb_publishable_bench",
      authorization: "Bearer sb_publishable_bench",
      "content-type": "application/json",
      "content-profile": "public",
      prefer,
      "x-client-info": "supabase-js/2.119.1",
      accept: "*/*",
      "cf-connecting-ip": address,
      "x-forwarded-for": address,
    },
    body: new TextEncoder().encode(JSON.stringify(body)),
    role: "anon",
  };
}

export interface Answer {
  status: number;
  ms: number;
  retryAfter?: string;
}

export async function send(
  handle: Postgrest["handle"],
  address: string,
  request = signUpRequest(address),
): Promise<Answer> {
  const sent = performance.now();
  const { status, headers } = await handle(request);
  const retryAfter = Object.entries(headers).find(([name]) => name.toLowerCase() === "retry-after")?.[1];
  return { status, ms: performance.now() - sent, retryAfter };
}

export interface Pace {
  perSecond: number;
  seconds: number;
  connections: number;
}

/** `perSecond` sign-ups a second from `address()` for `seconds`, over at most `connections` at once. */
export async function paced(
  handle: Postgrest["handle"],
  address: () => string,
  { perSecond, seconds, connections }: Pace,
): Promise<Answer[]> {
  const total = perSecond * seconds;
  const answers: Answer[] = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < total) {
        const index = next++;
        await sleep(Math.max(0, started + (index * 1000) / perSecond - performance.now()));
        answers.push(await send(handle, address()));
      }
    }),
  );
  return answers;
}

/**
 * A pool's connections warmed as a running API's are: opened (one sign-up on each at once), and
 * their plans made, by a few dozen sign-ups each (a connection's first sign-ups plan each
 * statement of the rules they reach; a flood's 50 connections doing so at once is a cost no
 * running API pays).
 */
export async function warm(handle: Postgrest["handle"], connections: number, address: () => string) {
  for (let round = 0; round < 30; round++) {
    await Promise.all(Array.from({ length: connections }, () => send(handle, address())));
  }
}
