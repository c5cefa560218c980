// What one client can cost everyone else at the gateway: caps on its requests in progress and
// its open connections, refused before their bodies are read, and its address taken when it
// connects, so that hanging up cannot move it into somebody else's count.
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../server/backend/database/database.ts";
import { clientOf } from "../../server/backend/http.ts";
import {
  canSendFrom,
  rest,
  restFrom,
  startTestBackend,
  storedCount,
  uniqueEmail,
  type TestBackend,
} from "./helpers.ts";

const CAP = 3;

let backend: TestBackend;
let owner: Database;
beforeAll(async () => {
  // The migration's own sign-up limits, and a small cap on requests at once.
  backend = await startTestBackend({ seed: null, maxRequestsPerClient: CAP });
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

describe("a client with requests in progress", () => {
  it(`gets 429 at once beyond ${CAP} of them, while others are served`, async ({ skip }) => {
    if (!(await canSendFrom("127.0.0.2"))) skip("this machine cannot send from 127.0.0.2 (macOS)");
    await owner.exec("truncate private.sign_up_sources");
    // Uploads that announce a body they are slow to send: each holds a request in progress.
    const slow = Array.from({ length: CAP }, () => open(request('{"email":', 1_000)));
    await new Promise((settle) => setTimeout(settle, 200));

    const started = Date.now();
    const refused = await rest(backend, signUp());
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.json()).toEqual({ message: "API rate limit exceeded" });
    expect(Date.now() - started, "refused without waiting").toBeLessThan(1_000);

    // Another client is not held up.
    expect((await restFrom("127.0.0.2", backend, signUp())).status).toBe(201);

    for (const socket of slow) socket.destroy();
    await new Promise((settle) => setTimeout(settle, 200));
    const after = await rest(backend, signUp());
    expect(after.status, await after.text()).toBe(201);
  });
});

describe("a client with many connections open", () => {
  it("is cut off when it opens more than its share, before a byte is read", async () => {
    // Eight connections per request in progress it may have: 24 here.
    const idle = Array.from({ length: 8 * CAP }, () => open(""));
    await new Promise((settle) => setTimeout(settle, 300));
    const extra = open(request(JSON.stringify({ email: uniqueEmail() })));
    const closed = await new Promise<boolean>((resolve) => {
      extra.on("data", () => resolve(false));
      extra.on("close", () => resolve(true));
    });
    expect(closed, "closed without an answer").toBe(true);

    idle.pop()!.destroy();
    await new Promise((settle) => setTimeout(settle, 200));
    expect((await rest(backend, { path: "early_access?select=email" })).status).toBe(200);
    for (const socket of idle) socket.destroy();
  });
});

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

describe("one client", () => {
  it.each([
    ["192.0.2.1", "192.0.2.1"],
    // An IPv6 customer is its /56.
    ["2001:db8:1:2:3:4:5:6", "2001:0db8:0001:0000::/56"],
    ["2001:db8:1:ff::1", "2001:0db8:0001:0000::/56"],
    ["2001:db8:1:100::1", "2001:0db8:0001:0100::/56"],
    ["::1", "0000:0000:0000:0000::/56"],
    ["2001:db8::", "2001:0db8:0000:0000::/56"],
  ])("%s is %s", (address, client) => {
    expect(clientOf(address)).toBe(client);
  });
});
