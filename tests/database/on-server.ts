// Sign-ups run on the server itself, thousands in a second: for tests whose claims are about
// counting over many clients rather than about concurrency.
import { randomUUID } from "node:crypto";
import pg from "pg";
import {
  GATE_SQL,
  insertSql,
  testServerUrl,
  VISITOR_SETTINGS_SQL,
  type TestDatabase,
} from "../support/database.ts";

/** A request: from `client`, a sign-up of `email`, or of a new address when null. */
export type Request = [client: string, email: string | null];

/**
 * Runs `requests` in order on the server, all on one connection, each as requestOverSql runs it
 * (the same three statements: VISITOR_SETTINGS_SQL with the edge's headers, the gate, GATE_SQL,
 * then insertSql()), logged in as authenticator, and committed on its own (COMMIT in a DO block),
 * without a round trip from Node each. The two statements with parameters are prepared once and
 * executed for each request, as PostgREST runs its statements (prepared): a string run by EXECUTE
 * is parsed and planned anew each time. An error rolls its request back, as PostgREST's rollback
 * does. How many got each answer: `stored`, `429`, or the SQLSTATE.
 */
export async function requestsOnServer(
  test: TestDatabase,
  requests: Request[],
): Promise<Record<string, number>> {
  const batch = `on-server-${randomUUID()}`;
  // Named after the batch: a call that failed half-way leaves its own on the connection.
  const [settings, insert] = ["settings", "insert"].map((statement) => `"${statement}-${batch}"`);
  const { rows } = await test.owner.query<{ name: string }>("select current_database() as name");
  const session = new pg.Client({ connectionString: testServerUrl("authenticator", rows[0]!.name) });
  let answers = "";
  session.on("notice", ({ message = "" }) => {
    if (message.startsWith("answers ")) answers = message.slice("answers ".length);
  });
  await session.connect();
  try {
    await session.query(`
      do $$
      declare
        request text[];
        answer text;
        answers jsonb := '{}';
      begin
        execute $prepare$prepare ${settings} (text) as ${VISITOR_SETTINGS_SQL}$prepare$;
        execute $prepare$prepare ${insert} (text) as ${insertSql()}$prepare$;
        foreach request slice 1 in array '${arrayOf(requests)}'::text[] loop
          begin
            execute pg_catalog.format('execute ${settings} (%L)',
              pg_catalog.json_build_object('cf-connecting-ip', request[1])::text);
            execute '${GATE_SQL}';
            execute pg_catalog.format('execute ${insert} (%L)',
              pg_catalog.json_build_array(pg_catalog.json_build_object('email', coalesce(request[2],
                '${batch}-' || pg_catalog.gen_random_uuid() || '@example.com')))::text);
            answer := 'stored';
          exception when others then
            answer := case when sqlerrm like '%PT429%' then '429' else sqlstate end;
          end;
          commit;
          answers := answers || pg_catalog.jsonb_build_object(answer, coalesce((answers ->> answer)::integer, 0) + 1);
        end loop;
        execute 'deallocate ${settings}';
        execute 'deallocate ${insert}';
        raise notice 'answers %', answers;
      end
      $$;`);
  } finally {
    await session.end();
  }
  return JSON.parse(answers) as Record<string, number>;
}

/** The requests as a PostgreSQL array of [client, email] pairs, NULL for a new address. */
const arrayOf = (requests: Request[]) =>
  `{${requests.map(([client, email]) => `{"${client}",${email === null ? "NULL" : `"${email}"`}}`).join(",")}}`;

/** `count` requests of each of `clients` in turn, for `email` (a new address each when null). */
export const inTurn = (clients: string[], count: number, email: string | null = null): Request[] =>
  Array.from({ length: count }, () => clients.map((client): Request => [client, email])).flat();
