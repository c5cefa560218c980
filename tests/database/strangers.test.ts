// A stranger's new sign-up is judged by its own counts alone, whatever others send: beside
// addresses held at their ceilings and networks flooded, none of a thousand fresh visitors is
// refused. What a stranger pays is on its own failures (a duplicate), which share the failures'
// sketch with the attackers' (25_sign_up_rules.sql): how often one meets 429 there is printed.
// The requests run on the server, one transaction each, as the claim is about counting;
// `npm run bench:flood` measures the same scene at full size and over concurrent connections.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { oneClientPerNetwork, openTestDatabase } from "../support/database.ts";
import { inTurn, requestsOnServer } from "./on-server.ts";
import { FLOOD_LIMITS, limitIn, limitsOf } from "./small-limits.ts";

describe("strangers beside a flood", () => {
  it("beside 100 addresses held at their ceilings by duplicates and 48 flooding theirs, none of 1,000 fresh visitors is refused; their own duplicates pay the sketch's price", async () => {
    // A fixed key, so that which cells the held addresses fill, and the figure, is the same every run.
    const test = await openTestDatabase({
      seed: `${FLOOD_LIMITS}
        update private.client_key_secret set secret = sha256('tests/database/strangers.test.ts'::bytea);`,
    });
    try {
      const { max } = limitIn(await limitsOf(test.owner), "ceiling", "per address per hour");
      const listed = `listed-${randomUUID()}@example.com`;
      await test.owner.query("insert into public.early_access (email) values ($1)", [listed]);
      // 100 addresses, each in a network of its own, send their ceiling and a tenth more of
      // duplicates, in turn; 48 others, three times their ceiling, of new addresses and duplicates.
      const held = oneClientPerNetwork(100, 32);
      const flooding = oneClientPerNetwork(48, 36);
      const scene = await requestsOnServer(test, [
        ...inTurn(held, Math.ceil(1.1 * max), listed),
        ...inTurn(flooding, 3 * max),
        ...inTurn(flooding, 3 * max, listed),
      ]);
      expect(scene["429"]).toBeGreaterThan(0);

      // 1,000 visitors from 1,000 other networks: each signs up, then sends its address again.
      const strangers = oneClientPerNetwork(1_000, 40);
      const signUps = await requestsOnServer(test, inTurn(strangers, 1));
      expect(signUps, "of 1,000 fresh visitors' sign-ups").toEqual({ stored: 1_000 });
      const { rows } = await test.owner.query<{ email: string }>(
        "select email from public.early_access where email like 'on-server-%' order by created_at desc limit 1000",
      );
      const again = await requestsOnServer(
        test,
        strangers.map((client, index) => [client, rows[index]!.email]),
      );
      const refused = again["429"] ?? 0;
      console.log(
        `strangers' own duplicates beside 148 held addresses: ${refused} of 1,000 met 429 (${refused / 10}%)`,
      );
      expect(refused + (again["23505"] ?? 0)).toBe(1_000);
      // About 1 - (1 - p_address)(1 - p_network) of them, where an address cell is full with one
      // held address in it and a network cell with two: under nine in ten, by the sketch's sizes.
      expect(refused).toBeLessThan(900);
    } finally {
      await test.database.close();
    }
  }, 300_000);
});
