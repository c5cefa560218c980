// The marks the owner's command adds as it reads the list, reason by reason: the addresses that
// must be marked, and those that must not (real providers, a company's own domain). The same
// mailbox is the database's grouping (supabase/schemas/50_addresses.sql), so its table runs
// there, on sign-ups at instants of the test's choosing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { domainMark, isDisposable, likelyTypoOf } from "../../tools/sign-ups/marks.ts";
import { markDomains, markedTotals, reviewOf } from "../../tools/sign-ups/review.ts";
import { openTestDatabase } from "../support/database.ts";

/** Real providers that a careless checker takes for typos or throwaways. */
const REAL_PROVIDERS = ["qq.com", "naver.com", "gmx.de", "yandex.ru", "proton.me"];

describe("a disposable domain", () => {
  it.each(["mailinator.com", "yopmail.com", "guerrillamail.com", "10minutemail.com", "x.mailinator.com"])(
    "%s is marked",
    (domain) => {
      expect(domainMark(domain)).toEqual({ reason: "disposable", words: `a disposable domain (${domain})` });
    },
  );

  it.each([
    ...REAL_PROVIDERS,
    "gmail.com",
    "example.org",
    "acme-robotics.com",
    // Relays that forward to the person's own inbox, though the list names them.
    "duck.com",
    "mozmail.com",
    "alias.anonaddy.com",
  ])("%s is not", (domain) => {
    expect(isDisposable(domain)).toBe(false);
  });
});

describe("a likely typo of a common domain", () => {
  it.each([
    ["gmial.com", "gmail.com"],
    ["gmai.com", "gmail.com"],
    ["gamil.com", "gmail.com"],
    ["gmail.con", "gmail.com"],
    ["gmail.co", "gmail.com"],
    ["hotmial.com", "hotmail.com"],
    ["yahooo.com", "yahoo.com"],
    ["outlok.com", "outlook.com"],
    ["icloud.co", "icloud.com"],
  ])("%s is marked, suggesting %s", (domain, suggestion) => {
    expect(likelyTypoOf(domain)).toBe(suggestion);
    expect(domainMark(domain)).toEqual({
      reason: "typo",
      words: `a likely typo of ${suggestion} (${domain})`,
    });
  });

  it.each([
    ...REAL_PROVIDERS,
    "gmail.com",
    "hotmail.com",
    // Real providers one letter from gmail.com.
    "ymail.com",
    "email.com",
    "mail.com",
    // Real national domains of the common ones.
    "yahoo.com.br",
    "hotmail.be",
    "protonmail.ch",
    // Companies' own domains, which a looser checker takes for me.com, aim.com, sky.com or the like.
    "acme.com",
    "meta.com",
    "ibm.com",
    "sap.com",
    "verizon.com",
    "example.org",
  ])("%s is not", (domain) => {
    expect(likelyTypoOf(domain)).toBeNull();
  });

  it("wins over the disposable list, which names some typo domains too", () => {
    expect(isDisposable("gmial.com")).toBe(true);
    expect(domainMark("gmial.com")?.reason).toBe("typo");
  });
});

describe("the same mailbox as an earlier sign-up", () => {
  let owner: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const { database, owner: postgres } = await openTestDatabase();
    owner = postgres;
    close = () => database.close();
  });
  afterAll(() => close?.());

  /** Signs these addresses up a minute apart, in order; the view's rows: address → repeats. */
  async function repeatsAmong(emails: string[]): Promise<Record<string, string>> {
    await owner.exec("delete from public.early_access");
    await owner.query(
      `insert into public.early_access (email, created_at)
       select email, timestamptz '2026-11-01 09:00Z' + interval '1 minute' * n
         from unnest($1::text[]) with ordinality as a(email, n)`,
      [emails],
    );
    const { rows } = await owner.query<{ email: string; repeats: string }>(
      "select email, repeats from public.early_access_repeats order by created_at",
    );
    return Object.fromEntries(rows.map(({ email, repeats }) => [email, repeats]));
  }

  it.each([
    ["Gmail ignores dots", ["johndoe@gmail.com", "john.doe@gmail.com"]],
    ["Gmail ignores dots and + tags", ["johndoe@gmail.com", "j.o.h.n.doe+launch@gmail.com"]],
    ["Googlemail is Gmail", ["john.doe@gmail.com", "johndoe+x@googlemail.com"]],
    ["Outlook ignores + tags", ["ana@outlook.com", "ana+news@outlook.com"]],
    ["Hotmail ignores + tags", ["ana@hotmail.com", "ana+news@hotmail.com"]],
    ["iCloud ignores + tags", ["ana@icloud.com", "ana+news@icloud.com"]],
    ["Fastmail ignores + tags", ["ana@fastmail.com", "ana+news@fastmail.com"]],
    ["Proton ignores + tags", ["ana@proton.me", "ana+news@proton.me"]],
  ])("%s: the later one is marked with the earlier address, the earliest stays clean", async (_, emails) => {
    expect(await repeatsAmong(emails)).toEqual({ [emails[1]!]: emails[0] });
  });

  it("each later sign-up names the earliest, however many came", async () => {
    const emails = ["j.doe@gmail.com", "jdoe@gmail.com", "jd.oe+1@gmail.com", "jdoe+2@googlemail.com"];
    expect(await repeatsAmong(emails)).toEqual({
      "jdoe@gmail.com": "j.doe@gmail.com",
      "jd.oe+1@gmail.com": "j.doe@gmail.com",
      "jdoe+2@googlemail.com": "j.doe@gmail.com",
    });
  });

  it.each([
    ["elsewhere, dots make another person", ["johndoe@company.com", "john.doe@company.com"]],
    ["elsewhere, a + tag makes another address", ["ana@company.com", "ana+news@company.com"]],
    ["Outlook does not ignore dots", ["ana@outlook.com", "a.na@outlook.com"]],
    ["Proton does not ignore dots", ["ana@proton.me", "a.na@proton.me"]],
    ["iCloud and me.com are separate mailboxes", ["ana@icloud.com", "ana@me.com"]],
    ["a name of nothing but a tag names no mailbox", ["+a@gmail.com", "+b@gmail.com"]],
  ])("%s: nothing is marked", async (_, emails) => {
    expect(await repeatsAmong(emails)).toEqual({});
  });

  it("the domains' views name each field, as the command reads them", async () => {
    await repeatsAmong(["johndoe@gmail.com", "john.doe@gmail.com", "ana@example.org"]);
    const counts = await owner.query<{ domains: unknown }>(
      "select domains from public.early_access_domain_counts",
    );
    expect(counts.rows[0]!.domains).toEqual(
      expect.arrayContaining([
        { domain: "gmail.com", sign_ups: 2, past_pace: 0, repeats: 1, repeats_past_pace: 0 },
        { domain: "example.org", sign_ups: 1, past_pace: 0, repeats: 0, repeats_past_pace: 0 },
      ]),
    );
    const domains = await owner.query<{ domains: unknown }>(
      "select domains from public.early_access_domains",
    );
    expect(domains.rows[0]!.domains).toEqual(
      expect.arrayContaining([
        {
          domain: "gmail.com",
          sign_ups: 2,
          first_at: "2026-11-01T09:01:00+00:00",
          last_at: "2026-11-01T09:02:00+00:00",
          some_emails: ["john.doe@gmail.com", "johndoe@gmail.com"],
        },
        expect.objectContaining({ domain: "example.org", some_emails: ["ana@example.org"] }),
      ]),
    );
  });

  it("an uppercase duplicate is never a second sign-up: the unique address refuses it", async () => {
    await repeatsAmong(["johndoe@gmail.com"]);
    await expect(
      owner.exec("insert into public.early_access (email) values ('JohnDoe@Gmail.com')"),
    ).rejects.toThrow(/early_access_email_key/);
  });
});

describe("the marks put together", () => {
  const domains = [
    // 2 later sign-ups to a mailbox reached before, 1 of them past a pace.
    { domain: "gmail.com", sign_ups: 40, past_pace: 5, repeats: 2, repeats_past_pace: 1 },
    { domain: "mailinator.com", sign_ups: 7, past_pace: 3, repeats: 0, repeats_past_pace: 0 },
    { domain: "gmial.com", sign_ups: 2, past_pace: 0, repeats: 0, repeats_past_pace: 0 },
    { domain: "example.org", sign_ups: 9, past_pace: 1, repeats: 0, repeats_past_pace: 0 },
  ];
  const marks = markDomains(domains);

  it("mark only the domains that earn it", () => {
    expect([...marks.keys()]).toEqual(["mailinator.com", "gmial.com"]);
  });

  it("count each reason, and every marked sign-up once", () => {
    // 9 past a pace; 7 + 2 at marked domains, 3 of them past a pace too; 2 repeats, 1 past a pace.
    expect(markedTotals(9, domains, marks)).toEqual({
      marked: 9 + (7 - 3) + 2 + (2 - 1),
      byReason: { pace: 9, disposable: 7, typo: 2, "same-mailbox": 2 },
    });
  });

  it("give a sign-up all its reasons in words", () => {
    const repeats = new Map([["r2", "ab@gmail.com"]]);
    expect(reviewOf({ id: "x", email: "zed@example.org", review: null }, marks, repeats)).toBeNull();
    const pace = "about 12 sign-ups per address per minute (pace: 10)";
    expect(reviewOf({ id: "x", email: "zed@mailinator.com", review: pace }, marks, repeats)).toBe(
      `${pace}; a disposable domain (mailinator.com)`,
    );
    expect(reviewOf({ id: "r2", email: "ab+x@gmail.com", review: null }, marks, repeats)).toBe(
      "the same mailbox as ab@gmail.com",
    );
  });
});
