// The client's address, which the database's sign-up limits count by, is taken when it
// connects: hanging up cannot move a sign-up into somebody else's count.
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import {
  signUpOverHttp,
  startTestSupabase,
  storedCount,
  uniqueEmail,
  type TestSupabase,
} from "../support/database.ts";

let backend: TestSupabase;
let owner: Database;
/** The requests the backend has finished with, from its log: one line each, once answered or abandoned. */
let handled: string[] = [];
beforeAll(async () => {
  // The migration's own sign-up limits.
  backend = await startTestSupabase({ seed: null, log: (line) => handled.push(line) });
  owner = backend.owner;
});

/** Resolves once the backend has logged `count` sign-ups (POSTs) as done, however long that takes. */
async function signUpsHandled(count: number): Promise<void> {
  while (handled.filter((line) => line.startsWith("POST ")).length < count)
    await new Promise((resume) => setTimeout(resume, 20));
}
afterAll(() => backend.close());

/**
 * A connection the gateway has accepted and reads from: it has answered a preflight on it. A
 * request sent next is received whole, however soon the client hangs up after it.
 */
async function acceptedConnection(): Promise<Socket> {
  const { hostname, port } = new URL(backend.url);
  const socket = connect({ port: Number(port), host: hostname, localAddress: "127.0.0.1" });
  socket.on("error", () => {});
  socket.write(
    "OPTIONS /rest/v1/early_access HTTP/1.1\r\nHost: h\r\nOrigin: http://h\r\n" +
      "Access-Control-Request-Method: POST\r\n\r\n",
  );
  await new Promise((answered) => socket.once("data", answered));
  return socket;
}

const request = (body: string) =>
  "POST /rest/v1/early_access HTTP/1.1\r\nHost: h\r\n" +
  `apikey: ${backend.publishableKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe("a client that hangs up as soon as it has sent a sign-up", () => {
  it("is counted as itself, not as a client with no address", async () => {
    await owner.exec("truncate private.sign_up_sources");
    handled = [];
    // Fewer than the pace of 10 a minute, each cut off with a reset at once.
    const emails = Array.from({ length: 8 }, () => uniqueEmail("hung-up"));
    for (const email of emails) {
      const socket = await acceptedConnection();
      socket.write(request(JSON.stringify({ email })));
      socket.resetAndDestroy();
    }
    // Each is stored in its own time after its client has gone: the backend says when it is
    // done with all of them, on a busy machine as on an idle one (no deadline to miss).
    await signUpsHandled(emails.length);
    expect(await storedCount(owner, emails)).toBe(emails.length);

    // Every one counted against 127.0.0.1: exactly the 2 left of its pace of 10 are unmarked.
    const after = Array.from({ length: 3 }, () => uniqueEmail("after-hang-ups"));
    for (const email of after) expect((await signUpOverHttp(backend, email)).status).toBe(201);
    const { rows } = await owner.query<{ marked: boolean }>(
      `select source is not null as marked from public.early_access_with_marks
        where email = any($1) order by created_at`,
      [after],
    );
    expect(rows.map(({ marked }) => marked)).toEqual([false, false, true]);
  });
});
