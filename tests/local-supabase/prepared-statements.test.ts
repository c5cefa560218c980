// PostgREST prepares each statement it runs on a connection once (db-prepared-statements, on by
// default), so a hosted project's server parses and plans a request's settings, its pre-request
// call and its own statement once per connection and shape, not once per request. The endpoint
// does the same, or every benchmark of the rules would charge them a parse and plan PostgREST
// never pays. Driven through PostgREST's own request path, on a pool of one connection.
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { createPostgrest, type Postgrest } from "../../tools/local-supabase/postgrest.ts";
import { openTestDatabase, uniqueEmail } from "../support/database.ts";

let database: Database;
let postgrest: Postgrest;
beforeAll(async () => {
  ({ database } = await openTestDatabase({ poolSize: 1 }));
  postgrest = await createPostgrest(database);
});
afterAll(() => database.close());

const signUp = (email: string, visitor: number) =>
  postgrest.handle({
    method: "POST",
    path: "/early_access",
    query: new URLSearchParams({ select: "*" }),
    headers: { prefer: "return=representation", "cf-connecting-ip": `198.18.9.${visitor}` },
    body: Buffer.from(JSON.stringify({ email })),
    role: "anon",
  });

/** The statements prepared over the protocol on the pool's one connection, oldest first. */
const prepared = async () =>
  (
    await database.query<{ statement: string }>(
      "select statement from pg_catalog.pg_prepared_statements where not from_sql order by prepare_time, statement",
    )
  ).rows.map(({ statement }) => statement);

it("prepares a request's settings, pre-request call and statement once per connection, whatever the values", async () => {
  const before = await prepared();
  const email = uniqueEmail("prepared");
  expect((await signUp(email, 1)).status).toBe(201);
  const afterOne = await prepared();
  const added = afterOne.filter((statement) => !before.includes(statement));
  expect(added).toHaveLength(3);
  expect(added.some((statement) => statement.startsWith("select set_config($1, $2, true)"))).toBe(true);
  expect(added).toContain('select "request_gate"."check_request"()');
  expect(added.some((statement) => statement.includes('INSERT INTO "public"."early_access"'))).toBe(true);

  // Other values, another client, a duplicate refused: the same three statements.
  expect((await signUp(uniqueEmail("prepared"), 2)).status).toBe(201);
  expect((await signUp(email, 3)).status).toBe(409);
  expect(await prepared()).toEqual(afterOne);
});
