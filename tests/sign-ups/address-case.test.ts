// One rule for an address's case, wherever an address is normalised: the page before it sends
// (src/lib/sign-up-rules.ts), the owner's command before it removes (tools/sign-ups/verbs/remove.ts),
// and the database as it stores (supabase/schemas/10_early_access.sql): every Unicode space
// trimmed, A to Z lowered and nothing else. Addresses beyond ASCII, which the database refuses,
// must not become an ASCII address on the way: the Kelvin sign lowered by toLowerCase() is `k`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeEmail, normalizeSignUp } from "../../src/lib/sign-up-rules.ts";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import type { SignUps } from "../../tools/sign-ups/rows.ts";
import type { Output } from "../../tools/sign-ups/verbs/context.ts";
import { removeAddress } from "../../tools/sign-ups/verbs/remove.ts";
import { openTestDatabase } from "../support/database.ts";

const CASES: Array<{ case: string; typed: string; normalised: string; stored: boolean }> = [
  // ASCII capitals and spaces: lowered and trimmed, and stored so.
  { case: "capitals and spaces", typed: " ADA@Example.COM ", normalised: "ada@example.com", stored: true },
  {
    case: "an ideographic space and a no-break space, as JavaScript's trim() takes them",
    typed: "\u3000Ada@Example.com\u00a0",
    normalised: "ada@example.com",
    stored: true,
  },
  // Beyond ASCII: only A to Z lowered; the database refuses such a local part.
  { case: "É", typed: "ÉLAN@example.com", normalised: "Élan@example.com", stored: false },
  {
    case: "Ö, and a capital domain",
    typed: "ÖMER@Example.COM",
    normalised: "Ömer@example.com",
    stored: false,
  },
  {
    case: "the dotted İ (toLowerCase: i and a combining dot)",
    typed: "İLKER@example.com",
    normalised: "İlker@example.com",
    stored: false,
  },
  {
    case: "ẞ (toLowerCase: ß)",
    typed: "STRAẞE@example.com",
    normalised: "straẞe@example.com",
    stored: false,
  },
  // toLowerCase() lowers the Kelvin sign to an ASCII k: another person's address.
  {
    case: "the Kelvin sign",
    typed: "\u212AATE@example.com",
    normalised: "\u212Aate@example.com",
    stored: false,
  },
];

describe.each(CASES)("$case: $typed", ({ typed, normalised }) => {
  it("the page sends it normalised so", () => {
    expect(normalizeEmail(typed)).toBe(normalised);
    expect(normalizeSignUp(typed, "").email).toBe(normalised);
  });

  it("the owner's command looks it up normalised so", async () => {
    const asked: string[] = [];
    const signUps = { remove: async (email: string) => (asked.push(email), false) } as unknown as SignUps;
    const discard = { write: () => true } as unknown as Output;
    await removeAddress({ signUps, now: new Date(), zone: "UTC", stdout: discard, stderr: discard }, typed);
    expect(asked).toEqual([normalised]);
  });
});

describe("the database", () => {
  let owner: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const test = await openTestDatabase();
    owner = test.owner;
    close = () => test.database.close();
  });
  afterAll(() => close?.());

  /** What the database stores for `email`, or the check that refused it. */
  async function store(email: string): Promise<{ stored: string } | { refused: string }> {
    await owner.exec("delete from public.early_access");
    try {
      const { rows } = await owner.query<{ email: string }>(
        "insert into public.early_access (email) values ($1) returning email",
        [email],
      );
      return { stored: rows[0]!.email };
    } catch (error) {
      return { refused: (error as { constraint?: string }).constraint ?? String(error) };
    }
  }

  it.each(CASES)(
    "$case: stores what the page and the command normalise to, or refuses it",
    async ({ typed, normalised, stored }) => {
      const expected = stored ? { stored: normalised } : { refused: "early_access_email_check" };
      // Typed as is, and as the page sends it: the same either way.
      expect(await store(typed)).toEqual(expected);
      expect(await store(normalised)).toEqual(expected);
    },
  );
});
