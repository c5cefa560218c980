// The client's address, which the database's sign-up limits count by, is taken when it
// connects: hanging up cannot move a sign-up into somebody else's count.
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../server/local-supabase/database/database.ts";
import { rest, startTestBackend, storedCount, uniqueEmail, type TestBackend } from "./helpers.ts";

let backend: TestBackend;
let owner: Database;
beforeAll(async () => {
  // The migration's own sign-up limits.
  backend = await startTestBackend({ seed: null });
  owner = backend.owner;
});
afterAll(() => backend.close());

const signUp = (email = uniqueEmail()) => ({ method: "POST", body: JSON.stringify({ email }) });

/** A raw connection that sends these bytes (from `localAddress`, 127.0.0.1 by default). */
function open(bytes: string, localAddress = "127.0.0.1"): Socket {
  const { hostname, port } = new URL(backend.url);
  const socket = connect({ port: Number(port), host: hostname, localAddress });
  socket.on("error", () => {});
  socket.write(bytes);
  return socket;
}

const request = (body: string, announced = Buffer.byteLength(body)) =>
  "POST /rest/v1/early_access HTTP/1.1\r\nHost: h\r\n" +
  `apikey: ${backend.publishableKey}\r\nContent-Type: application/json\r\nContent-Length: ${announced}\r\n\r\n${body}`;

describe("a client that hangs up as soon as it has sent a sign-up", () => {
  it("is counted as itself, not as a client with no address", async () => {
    await owner.exec("truncate private.sign_up_sources");
    // Fewer than the pace of 10 a minute, each cut off with a reset at once.
    const emails = Array.from({ length: 8 }, () => uniqueEmail("hung-up"));
    for (const email of emails) {
      open(request(JSON.stringify({ email }))).resetAndDestroy();
      await new Promise((settle) => setTimeout(settle, 30));
    }
    await new Promise((settle) => setTimeout(settle, 1_000));
    const kept = await storedCount(owner, emails);
    expect(kept, "sign-ups stored though their clients hung up").toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(8);

    // Every one stored counted against 127.0.0.1: exactly the rest of its pace of 10 remain
    // unmarked.
    const after = Array.from({ length: 11 - kept }, () => uniqueEmail("after-hang-ups"));
    for (const email of after) expect((await rest(backend, signUp(email))).status).toBe(201);
    const { rows } = await owner.query<{ marked: boolean }>(
      `select source is not null as marked from public.early_access_with_marks
        where email = any($1) order by created_at`,
      [after],
    );
    expect(rows.map(({ marked }) => marked)).toEqual([...Array(10 - kept).fill(false), true]);
  });
});
