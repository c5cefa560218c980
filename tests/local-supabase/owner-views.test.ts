// The views the owner's command reads (supabase/schemas/30_marks.sql, 40_sign_ups_by_hour.sql,
// 50_addresses.sql), each read through the local Supabase with the secret key as the command reads
// it (tools/sign-ups/client.ts), over one list of known sign-ups: the server counts, groups, bins
// and matches them, so these answers are what a project on either major gives the command. The
// command's own formatting and process: tests/sign-ups.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_PUBLISHABLE_KEY } from "../../config/local-supabase.ts";
import { rest, startTestSupabase, type TestSupabase } from "../support/database.ts";

let backend: TestSupabase;
beforeAll(async () => {
  backend = await startTestSupabase();
  // Known instants, on either side of a quarter hour's and an hour's edge; a mailbox reached three
  // times (Gmail's dots and tags, googlemail.com), one reached twice at Outlook (a tag), two
  // addresses at one company whose dots make two people; two marked past a pace, one of them a
  // repeat.
  await backend.owner.exec(`
    insert into public.early_access (email, phone, created_at) values
      ('john.doe@gmail.com', '555 0100', '2026-01-10 18:14:59.999999+00'),
      ('johndoe+launch@gmail.com', null, '2026-01-10 18:15:00+00'),
      ('ana@outlook.com', '555 0102', '2026-01-10 18:59:59.999999+00'),
      ('j.o.h.n.doe@googlemail.com', null, '2026-01-10 19:00:00+00'),
      ('ana+news@outlook.com', null, '2026-01-10 19:44:00+00'),
      ('john.doe@company.com', '555 0105', '2026-03-01 09:31:00+00'),
      ('johndoe@company.com', null, '2026-03-01 09:32:00+00');
    insert into public.early_access_marks (sign_up_id, source, reason)
    select id, '0123456789ab', 'about 11 sign-ups per address per minute (pace: 10)' from public.early_access
     where email in ('johndoe+launch@gmail.com', 'johndoe@company.com');`);
});
afterAll(() => backend?.close());

/** A view read with the secret key: its rows. */
async function read(path: string): Promise<unknown> {
  const answer = await rest(backend, { path, key: backend.secretKey });
  expect(answer.status, path).toBe(200);
  return answer.json();
}

describe("the owner's views, read with the secret key", () => {
  it("early_access_totals: the whole list in one row", async () => {
    expect(await read("early_access_totals?select=sign_ups,with_phone,marked,first_at,last_at")).toEqual([
      {
        sign_ups: 7,
        with_phone: 3,
        marked: 2,
        first_at: "2026-01-10T18:14:59.999999+00:00",
        last_at: "2026-03-01T09:32:00+00:00",
      },
    ]);
  });

  it("early_access_hours: per UTC hour and per quarter of it, from a given hour on", async () => {
    expect(
      await read(
        "early_access_hours?select=starts_at,sign_ups,by_quarter&starts_at=gte.2026-01-10T18:00:00Z&order=starts_at&limit=1000",
      ),
    ).toEqual([
      { starts_at: "2026-01-10T18:00:00+00:00", sign_ups: 3, by_quarter: [1, 1, 0, 1] },
      { starts_at: "2026-01-10T19:00:00+00:00", sign_ups: 2, by_quarter: [1, 0, 1, 0] },
      { starts_at: "2026-03-01T09:00:00+00:00", sign_ups: 2, by_quarter: [0, 0, 2, 0] },
    ]);
  });

  it("early_access_with_marks: every sign-up with its source and reason, newest first", async () => {
    const rows = (await read(
      "early_access_with_marks?select=email,phone,created_at,source,review&order=created_at.desc,id.desc",
    )) as Array<{ email: string; source: string | null; review: string | null }>;
    expect(rows.map(({ email }) => email)).toEqual([
      "johndoe@company.com",
      "john.doe@company.com",
      "ana+news@outlook.com",
      "j.o.h.n.doe@googlemail.com",
      "ana@outlook.com",
      "johndoe+launch@gmail.com",
      "john.doe@gmail.com",
    ]);
    expect(
      rows.filter(({ source }) => source).map(({ email, source, review }) => [email, source, review]),
    ).toEqual([
      ["johndoe@company.com", "0123456789ab", "about 11 sign-ups per address per minute (pace: 10)"],
      ["johndoe+launch@gmail.com", "0123456789ab", "about 11 sign-ups per address per minute (pace: 10)"],
    ]);
  });

  it("early_access_sources: marked sign-ups per source, with their first few addresses", async () => {
    expect(
      await read(
        "early_access_sources?select=source,sign_ups,first_at,last_at,some_emails&order=last_at.desc,source",
      ),
    ).toEqual([
      {
        source: "0123456789ab",
        sign_ups: 2,
        first_at: "2026-01-10T18:15:00+00:00",
        last_at: "2026-03-01T09:32:00+00:00",
        some_emails: ["johndoe+launch@gmail.com", "johndoe@company.com"],
      },
    ]);
  });

  it("early_access_repeats: each later sign-up to a mailbox, with the earliest address", async () => {
    expect(await read("early_access_repeats?select=email,created_at,repeats&order=created_at,id")).toEqual([
      {
        email: "johndoe+launch@gmail.com",
        created_at: "2026-01-10T18:15:00+00:00",
        repeats: "john.doe@gmail.com",
      },
      {
        email: "j.o.h.n.doe@googlemail.com",
        created_at: "2026-01-10T19:00:00+00:00",
        repeats: "john.doe@gmail.com",
      },
      { email: "ana+news@outlook.com", created_at: "2026-01-10T19:44:00+00:00", repeats: "ana@outlook.com" },
    ]);
  });

  it("early_access_mailboxes: the repeats per mailbox", async () => {
    expect(
      await read(
        "early_access_mailboxes?select=repeats,sign_ups,first_at,last_at,some_emails&order=last_at.desc,repeats",
      ),
    ).toEqual([
      {
        repeats: "ana@outlook.com",
        sign_ups: 1,
        first_at: "2026-01-10T19:44:00+00:00",
        last_at: "2026-01-10T19:44:00+00:00",
        some_emails: ["ana+news@outlook.com"],
      },
      {
        repeats: "john.doe@gmail.com",
        sign_ups: 2,
        first_at: "2026-01-10T18:15:00+00:00",
        last_at: "2026-01-10T19:00:00+00:00",
        some_emails: ["johndoe+launch@gmail.com", "j.o.h.n.doe@googlemail.com"],
      },
    ]);
  });

  it("early_access_domain_counts: each domain's sign-ups, marked, repeats, and both, by name, in one row", async () => {
    const [{ domains }] = (await read("early_access_domain_counts?select=domains")) as [
      { domains: unknown[] },
    ];
    const counts = (
      domain: string,
      sign_ups: number,
      past_pace: number,
      repeats: number,
      repeats_past_pace: number,
    ) => ({ domain, sign_ups, past_pace, repeats, repeats_past_pace });
    expect(domains).toHaveLength(4);
    expect(domains).toEqual(
      expect.arrayContaining([
        counts("company.com", 2, 1, 0, 0),
        counts("gmail.com", 2, 1, 1, 1),
        counts("googlemail.com", 1, 0, 1, 0),
        counts("outlook.com", 2, 0, 1, 0),
      ]),
    );
  });

  it("early_access_domains: each domain's first and latest, and two of its addresses, by name, in one row", async () => {
    const [{ domains }] = (await read("early_access_domains?select=domains")) as [{ domains: unknown[] }];
    const domain = (
      name: string,
      sign_ups: number,
      first_at: string,
      last_at: string,
      some_emails: string[],
    ) => ({ domain: name, sign_ups, first_at, last_at, some_emails });
    expect(domains).toHaveLength(4);
    expect(domains).toEqual(
      expect.arrayContaining([
        domain("company.com", 2, "2026-03-01T09:31:00+00:00", "2026-03-01T09:32:00+00:00", [
          "john.doe@company.com",
          "johndoe@company.com",
        ]),
        domain("gmail.com", 2, "2026-01-10T18:14:59.999999+00:00", "2026-01-10T18:15:00+00:00", [
          "john.doe@gmail.com",
          "johndoe+launch@gmail.com",
        ]),
        domain("googlemail.com", 1, "2026-01-10T19:00:00+00:00", "2026-01-10T19:00:00+00:00", [
          "j.o.h.n.doe@googlemail.com",
        ]),
        domain("outlook.com", 2, "2026-01-10T18:59:59.999999+00:00", "2026-01-10T19:44:00+00:00", [
          "ana+news@outlook.com",
          "ana@outlook.com",
        ]),
      ]),
    );
  });

  it("are for the secret key only: the publishable key reads none of them", async () => {
    for (const view of [
      "early_access_totals",
      "early_access_hours",
      "early_access_with_marks",
      "early_access_sources",
      "early_access_repeats",
      "early_access_mailboxes",
      "early_access_domain_counts",
      "early_access_domains",
    ]) {
      const answer = await rest(backend, { path: `${view}?select=*`, key: LOCAL_PUBLISHABLE_KEY });
      expect(answer.status, view).toBe(401);
      expect((await answer.json()).code, view).toBe("42501");
    }
  });
});
