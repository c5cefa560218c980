// What the ceilings' sketch (25_sign_up_rules.sql, "Attempts") costs the people it is not meant
// for: nobody real is refused, as a day's crowd of clients is all stored, and strangers pay little
// while others hold addresses at their ceilings. Claims about the sketch's counting, not about
// concurrency (that is ceilings.test.ts), so the sign-ups run on the server, one transaction each.
// On PostgreSQL 17 alone: the counting is the same functions on either major, which
// sign-up-limits.test.ts runs on 15 too, and `npm run bench:flood` measures the strangers' share
// on both.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  INSERT_BODY_SQL,
  oneClientPerNetwork,
  openTestDatabase,
  VISITOR_SETTINGS_SQL,
  type TestDatabase,
} from "../support/database.ts";
import { FLOOD_LIMITS, limitIn, limitsOf } from "./small-limits.ts";

/**
 * A sign-up of a new address from each of `clients`, in order, run on the server, all on one
 * connection: each as requestOverSql runs it (the same two statements: VISITOR_SETTINGS_SQL with
 * the edge's headers, then INSERT_BODY_SQL), logged in as authenticator, and committed on its own
 * (COMMIT in a DO block), without a round trip from Node each. The two are prepared once and
 * executed for each sign-up, as PostgREST runs its statements (prepared): a string run by EXECUTE
 * is parsed and planned anew each time, a sixth of what these sign-ups cost the server. A refusal
 * by the rules (PGRST) rolls its sign-up back, as PostgREST's rollback does (the counts, in
 * sequences, stay charged either way), and is counted; any other error fails the call. For claims
 * about the sketch's counting, not about concurrency. How many were refused.
 */
async function signUpsOnServer({ database, owner }: TestDatabase, clients: string[]): Promise<number> {
  const batch = `on-server-${randomUUID()}`;
  // Named after the batch: a call that failed half-way leaves its own on the connection.
  const [settings, insert] = ["settings", "insert"].map((statement) => `"${statement}-${batch}"`);
  await database.exec(`
    do $$
    declare
      client text;
    begin
      execute $prepare$prepare ${settings} (text) as ${VISITOR_SETTINGS_SQL}$prepare$;
      execute $prepare$prepare ${insert} (text) as ${INSERT_BODY_SQL}$prepare$;
      foreach client in array '{${clients.join(",")}}'::text[] loop
        begin
          execute pg_catalog.format('execute ${settings} (%L)',
            pg_catalog.json_build_object('cf-connecting-ip', client)::text);
          execute pg_catalog.format('execute ${insert} (%L)',
            pg_catalog.json_build_array(
              pg_catalog.json_build_object('email', '${batch}-' || pg_catalog.gen_random_uuid() || '@example.com'))::text);
        exception when sqlstate 'PGRST' then
          null;
        end;
        commit;
      end loop;
      execute 'deallocate ${settings}';
      execute 'deallocate ${insert}';
    end
    $$;`);
  // Counted by the owner, past every rule.
  const { rows } = await owner.query<{ n: number }>(
    "select count(*)::integer as n from public.early_access where starts_with(email, $1)",
    [batch],
  );
  return clients.length - rows[0]!.n;
}

describe("nobody real refused, strangers pay little", () => {
  it("5,000 clients signing up 3 times within the hour are all stored", async () => {
    const test = await openTestDatabase({ seed: null });
    try {
      const clients = Array.from(
        { length: 5_000 },
        (_, index) => `${11 + (index % 200)}.${(index >> 3) & 255}.${index & 255}.${1 + (index % 250)}`,
      );
      // The claim is the sketch's counting, not concurrency: the sign-ups run on the server.
      const refused = await signUpsOnServer(test, [...clients, ...clients, ...clients]);
      expect(refused, "of 15,000 sign-ups, refused").toBe(0);
    } finally {
      await test.database.close();
    }
  }, 300_000);

  it("with 100 addresses held at their ceilings, at most 2% of 1,000 fresh visitors are refused", async () => {
    // A fixed key, so that which cells the held addresses fill, and the figure, is the same every
    // run. Over random keys it averages (1 - e^(-100/256))^4 = 1.1%, and passes 2% in about one
    // sample of 200 (simulated): a test that failed that often would teach nothing.
    const test = await openTestDatabase({
      seed: `${FLOOD_LIMITS}
        update private.client_key_secret set secret = sha256('tests/database/crowds.test.ts'::bytea);`,
    });
    try {
      const ceiling = limitIn(await limitsOf(test.owner), "ceiling", "per address per hour");
      // Each held address sends its ceiling and one more, refused, in a network of its own, in
      // turn. The claim is the sketch's shared cells, not concurrency: the sign-ups run on the server.
      const held = oneClientPerNetwork(100, 32);
      await signUpsOnServer(test, Array.from({ length: ceiling.max }, () => held).flat());
      expect(await signUpsOnServer(test, held), "of the held addresses' last, refused").toBe(100);

      const refused = await signUpsOnServer(test, oneClientPerNetwork(1_000, 40));
      console.log(`strangers refused with 100 addresses held: ${refused} of 1,000 (${refused / 10}%)`);

      expect(refused).toBeLessThanOrEqual(20);
    } finally {
      await test.database.close();
    }
  }, 300_000);
});
