// What the rules cost the people they are not meant for, in a crowd: a day's crowd of clients is
// all stored. A claim about counting, not about concurrency (that is ceilings.test.ts), so the
// requests run on the server, one transaction each. On PostgreSQL 17 alone: the counting is the
// same functions on either major, which sign-up-limits.test.ts, attempts.test.ts and
// strangers.test.ts run on 15 too.
import { describe, expect, it } from "vitest";
import { openTestDatabase } from "../support/database.ts";
import { inTurn, requestsOnServer } from "./on-server.ts";

describe("nobody real refused", () => {
  it("5,000 clients signing up 3 times within the hour are all stored", async () => {
    const test = await openTestDatabase({ seed: null });
    try {
      const clients = Array.from(
        { length: 5_000 },
        (_, index) => `${11 + (index % 200)}.${(index >> 3) & 255}.${index & 255}.${1 + (index % 250)}`,
      );
      const answers = await requestsOnServer(test, inTurn(clients, 3));
      expect(answers, "of 15,000 sign-ups").toEqual({ stored: 15_000 });
    } finally {
      await test.database.close();
    }
  }, 300_000);
});
