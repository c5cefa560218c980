import { describe, expect, it } from "vitest";
import { outcomeOf, type Outcome } from "../../src/lib/sign-up-request";

describe("outcomeOf", () => {
  it.each<[Parameters<typeof outcomeOf>[0], Outcome]>([
    // No error: registered.
    [{ error: null }, "registered"],
    // Postgres' unique violation, as PostgREST relays it: already registered.
    [{ error: { code: "23505", message: "duplicate key value violates unique constraint" } }, "duplicate"],
    // Any other database error.
    [{ error: { code: "23514", message: "violates check constraint" } }, "failed"],
    // The per-address limit (429): the generic failure.
    [{ error: { code: "PT429", message: "Too many sign-ups from this address" } }, "failed"],
    // More than one sign-up in one request.
    [{ error: { code: "P0001", message: "Only one sign-up per request" } }, "failed"],
    // A network failure, as supabase-js returns it (code is an empty string).
    [{ error: { code: "", message: "TypeError: Failed to fetch" } }, "failed"],
    // A gateway error without a code (a wrong key, or an HTML 502 page).
    [{ error: { message: "Invalid API key" } }, "failed"],
  ])("%j → %s", (answer, expected) => {
    expect(outcomeOf(answer)).toBe(expected);
  });
});
