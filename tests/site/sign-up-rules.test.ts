import { describe, expect, it } from "vitest";
import { isValidEmail, normalizeSignUp } from "../../src/lib/sign-up-rules";

describe("isValidEmail", () => {
  it.each([
    // Empty and blank are refused.
    ["", false],
    ["   ", false],
    // No '@' is refused.
    ["future.example.com", false],
    // The rule is only "non-empty and contains '@'"; the browser's check adds the rest.
    ["a@b", true],
    ["Visitor@Example.com", true],
    // Surrounding spaces are trimmed before the check.
    ["  a@b.co  ", true],
  ])("%j → %s", (email, expected) => {
    expect(isValidEmail(email)).toBe(expected);
  });
});

describe("normalizeSignUp", () => {
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
