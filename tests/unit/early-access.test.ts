import { describe, expect, it } from "vitest";
import { isValidEmail, normalizeSignUp, outcomeOf, type Outcome } from "../../src/lib/early-access";

describe("isValidEmail (spec §5)", () => {
  it.each([
    // Empty and blank are refused.
    ["", false],
    ["   ", false],
    // No '@' is refused.
    ["future.example.com", false],
    // The spec's rule is only "non-empty and contains '@'"; the browser's check adds the rest.
    ["a@b", true],
    ["Visitor@Example.com", true],
    // Surrounding spaces are trimmed before the check.
    ["  a@b.co  ", true],
  ])("%j → %s", (email, expected) => {
    expect(isValidEmail(email)).toBe(expected);
  });
});

describe("normalizeSignUp (spec §3)", () => {
  it.each([
    // Email trimmed and lowercased; an empty phone is stored as null.
    [" Visitor@Example.COM ", "", { email: "visitor@example.com", phone: null }],
    // A blank phone is empty too.
    ["a@b.co", "   ", { email: "a@b.co", phone: null }],
    // A phone is trimmed and otherwise kept as typed: no format check.
    ["a@b.co", "  +1 (555) 000-1234 ", { email: "a@b.co", phone: "+1 (555) 000-1234" }],
  ])("%j, %j", (email, phone, expected) => {
    expect(normalizeSignUp(email, phone)).toEqual(expected);
  });
});

describe("outcomeOf (spec §8)", () => {
  it.each<[Parameters<typeof outcomeOf>[0], Outcome]>([
    // No error: registered.
    [{ error: null }, "registered"],
    // Postgres' unique violation, as PostgREST relays it: already registered.
    [{ error: { code: "23505", message: "duplicate key value violates unique constraint" } }, "duplicate"],
    // Any other database error.
    [{ error: { code: "23514", message: "violates check constraint" } }, "failed"],
    // The per-address limit (429): the spec's generic failure.
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
