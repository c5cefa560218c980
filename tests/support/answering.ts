// A server that answers every request with one status and body, as a Supabase project that does
// not work does: paused (540, "Project paused"), or failing (502 and an HTML page).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** Supabase's status for every request to a paused project (its "HTTP Status Codes" guide). */
export const PAUSED = { status: 540, body: "Project paused" };

/**
 * Listening on 127.0.0.1, named `localhost` in its URL: an address elsewhere than the local
 * Supabase, which the owner's command would otherwise start.
 */
export async function answering(
  status: number,
  body: string,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((_, response) => response.writeHead(status).end(body));
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((closed) => server.close(() => closed())),
  };
}

/** A paused project, for the length of `use`. */
export async function withPausedProject<T>(use: (url: string) => Promise<T>): Promise<T> {
  const server = await answering(PAUSED.status, PAUSED.body);
  try {
    return await use(server.url);
  } finally {
    await server.close();
  }
}
