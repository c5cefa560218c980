// The database stores only real addresses, whoever calls it: exactly the emails the form's
// email field accepts (the browser's type=email grammar, WHATWG "valid e-mail address", after
// trimming and lowercasing; at most 254 characters), and phones of at most 32 characters with
// nothing invisible in them. Anything else is refused with 400 and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSupabase } from "../../tools/local-supabase/index.ts";
import { rest, startTestSupabase, uniqueEmail } from "../support/database.ts";

let backend: LocalSupabase;
beforeAll(async () => {
  backend = await startTestSupabase();
});
afterAll(() => backend.close());

/** An anonymous sign-up with this body, as the site sends it; its status and stored row. */
async function signUp(body: Record<string, unknown>) {
  const response = await rest(backend, {
    method: "POST",
    path: "early_access?select=email,phone",
    headers: { prefer: "return=representation" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const refusedBy = (constraint: string) => ({
  code: "23514",
  details: null,
  hint: null,
  message: `new row for relation "early_access" violates check constraint "${constraint}"`,
});

/** Unique per run, so that accepted cases never collide with an earlier run or each other. */
const unique = () => crypto.randomUUID().slice(0, 8);

describe("an email the form would not accept", () => {
  it.each([
    // A JSON array where text belongs, which the database would turn into text.
    ["a JSON array", () => ["array@example.com"]],
    // A JSON object likewise.
    ["a JSON object", () => ({ email: "object@example.com" })],
    ["only an @", () => "@"],
    ["a second @", () => "a@b@example.com"],
    ["an inner space", () => "first last@example.com"],
    ["a zero-width space", () => "zero\u200bwidth@example.com"],
    ["a right-to-left override", () => "evil\u202e@example.com"],
    ["a control character", () => "bell\u0007@example.com"],
    ["a letter outside ASCII", () => "jürgen@example.com"],
    // Letters that lower() would turn into ASCII ones, storing an address the browser refuses
    // as one it accepts: the Kelvin sign (k), a dotted capital I (i and a combining dot), a
    // long s (s, in some locales).
    ["a Kelvin sign", () => `\u212Aelvin-${unique()}@example.com`],
    ["a dotted capital I", () => `\u0130i-${unique()}@example.com`],
    ["a long s", () => `\u017Fam-${unique()}@example.com`],
    ["a non-ASCII letter in the domain", () => `a-${unique()}@\u212Aexample.com`],
    ["a quoted local part", () => '"quoted"@example.com'],
    ["a domain label starting with -", () => "a@-example.com"],
    ["a domain label ending with -", () => "a@example-.com"],
    ["an empty domain label", () => "a@example..com"],
    ["a domain label of 64 characters", () => `a@${"d".repeat(64)}.com`],
    ["an address literal", () => "a@[192.0.2.1]"],
    ["255 characters", () => `${"a".repeat(243)}@example.com`],
  ])("is refused: %s", async (_, email) => {
    const answer = await signUp({ email: email() });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(refusedBy("early_access_email_check"));
  });
});

describe("an email the form accepts", () => {
  it.each([
    ["a plain address", () => `plain-${unique()}@example.com`],
    // The grammar allows a domain without a dot.
    ["a dotless domain", () => `dotless-${unique()}@localhost`],
    ["subdomains and a tag", () => `first.last+tag-${unique()}@mail.sub.example.co.uk`],
    ["every symbol the grammar allows", () => `x_y-z'!#$%&*/=?^\`{|}~.${unique()}@example.com`],
    ["a domain label of 63 characters", () => `a${unique()}@${"d".repeat(63)}.com`],
    ["exactly 254 characters", () => `${unique()}${"a".repeat(234)}@example.com`],
  ])("is stored: %s", async (_, email) => {
    const address = email();
    const answer = await signUp({ email: address });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body).toEqual([{ email: address, phone: null }]);
  });

  it("is stored trimmed of every Unicode space and lowercased", async () => {
    const id = unique();
    const answer = await signUp({ email: `\u00a0 Ada.${id}@Example.COM\t\u3000` });
    expect(answer.body).toEqual([{ email: `ada.${id}@example.com`, phone: null }]);
  });
});

describe("a phone", () => {
  it.each([
    ["a right-to-left override", "\u202e+1 555 0100"],
    ["a zero-width space", "+1\u200b555 0100"],
    ["a byte-order mark inside", "+1 555\ufeff0100"],
    ["a line break inside", "+1 555\n0100"],
    ["a line separator", "+1 555\u20280100"],
    ["an invisible tag character", "+1 555 0100\u{e0041}"],
    ["Hangul fillers, which look blank", "\u3164\u3164\u3164"],
    ["a blank Braille pattern", "\u2800"],
    ["a private-use character", "+1 555 \ue000"],
    ["a noncharacter", "1\uffff"],
    ["a noncharacter of another plane", "1\u{1fffe}"],
    // Unicode's Default_Ignorable_Code_Point, every one of which renders as nothing: assigned
    // ones that are neither control nor format characters, and the unassigned ones kept for more.
    ["nothing but combining grapheme joiners", "\u034f".repeat(32)],
    ["a variation selector", "+1 555 0100\ufe0f"],
    ["a text-style variation selector", "+1\ufe0e555 0100"],
    ["a supplementary variation selector", "+1 555 0100\u{e0100}"],
    ["the last supplementary variation selector", "+1 555 0100\u{e01ef}"],
    ["a Mongolian free variation selector", "+1 555\u180b0100"],
    ["the Mongolian fourth variation selector", "+1 555\u180f0100"],
    ["a Khmer inherent vowel", "+1 555\u17b40100"],
    ["another Khmer inherent vowel", "+1 555\u17b50100"],
    ["an unassigned default-ignorable code point", "+1 555\u20650100"],
    ["an unassigned one in the specials", "+1 555\ufff00100"],
    ["another in the specials", "+1 555\ufff80100"],
    ["an unassigned one after the tags", "+1 555 0100\u{e0080}"],
    ["the last default-ignorable code point", "+1 555 0100\u{e0fff}"],
    ["33 characters", "1".repeat(33)],
  ])("is refused with %s", async (_, phone) => {
    const answer = await signUp({ email: uniqueEmail(), phone });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(refusedBy("early_access_phone_check"));
  });

  it("is stored trimmed of every Unicode space, as the form trims it", async () => {
    const answer = await signUp({ email: uniqueEmail(), phone: "\u00a0 +33 6 12\u00a034 56\u3000" });
    expect(answer.body[0].phone).toBe("+33 6 12\u00a034 56");
  });

  it.each([
    ["punctuation and an extension", "+1 (555) 000-1234 ext. 7"],
    ["digits of another script", "+٩٧١ ٥٠ ١٢٣ ٤٥٦٧"],
    ["32 characters", "1".repeat(32)],
  ])("is stored as typed with %s", async (_, phone) => {
    const answer = await signUp({ email: uniqueEmail(), phone });
    expect(answer.status).toBe(201);
    expect(answer.body[0].phone).toBe(phone);
  });
});
