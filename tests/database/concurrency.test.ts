// Many sign-ups at once, as Supabase serves them: requests run concurrently over a pool of
// connections. No write is lost, one address wins exactly once, and no race ends in a server
// error: the address's uniqueness is checked at once, not deferred, so the later of two
// requests waits for the earlier and fails as a duplicate (23505), never a deadlock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  clientFor,
  DUPLICATE_MESSAGE,
  rest,
  startTestSupabase,
  uniqueEmail,
  upsertCall,
  type TestSupabase,
} from "../support/database.ts";

let backend: TestSupabase;
beforeAll(async () => {
  // PostgREST's pool is 10 by default; a larger one lets more transactions overlap.
  backend = await startTestSupabase({ poolSize: 50 });
});
afterAll(() => backend.close());

describe("concurrent sign-ups", () => {
  it("stores all 200 distinct addresses sent at once, among failing requests", async () => {
    const anon = clientFor(backend, backend.publishableKey);
    const taken = uniqueEmail("taken");
    await anon.from("early_access").insert({ email: taken });
    const emails = Array.from({ length: 200 }, (_, index) => uniqueEmail(`crowd${index}`));
    // Each new address races a duplicate, whose rollback must not take other writes with it.
    const answers = await Promise.all(
      emails.flatMap((email) => [
        anon.from("early_access").insert({ email }).select(),
        anon.from("early_access").insert({ email: taken }).select(),
      ]),
    );

    expect(answers.map(({ status }) => status)).toEqual(emails.flatMap(() => [201, 409]));
    expect(answers.filter((_, index) => index % 2 === 0).map(({ data }) => data![0].email)).toEqual(emails);
    const { data: stored } = await clientFor(backend, backend.secretKey).from("early_access").select("email");
    expect(stored!.map(({ email }) => email)).toEqual(expect.arrayContaining(emails));
  });

  it("accepts exactly one of 40 racing inserts of one address", async () => {
    const anon = clientFor(backend, backend.publishableKey);
    const email = uniqueEmail("race");
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => anon.from("early_access").insert({ email }).select()),
    );

    const statuses = answers.map(({ status }) => status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(39);
    for (const { error } of answers.filter(({ status }) => status === 409)) {
      expect(error).toEqual({ code: "23505", details: null, hint: null, message: DUPLICATE_MESSAGE });
    }
    const { data: stored } = await clientFor(backend, backend.secretKey)
      .from("early_access")
      .select("email")
      .eq("email", email);
    expect(stored).toHaveLength(1);
  });

  it("answers ?on_conflict=email with Prefer: resolution=ignore-duplicates, also for 20 racing requests", async () => {
    // PostgREST's `on conflict ("email") do nothing`: the unique constraint must be usable as an
    // arbiter, which a deferrable one is not (55000).
    const upsert = async (email: string) => {
      const response = await rest(backend, upsertCall(email));
      expect(response.status).toBe(201);
      return response.json();
    };
    const email = uniqueEmail("upsert");

    expect(await upsert(email)).toEqual([{ email }]);
    expect(await upsert(email)).toEqual([]);
    const racing = uniqueEmail("upsert-race");
    const answers = await Promise.all(Array.from({ length: 20 }, () => upsert(racing)));
    expect(answers.flat()).toEqual([{ email: racing }]);
  });
});
