// What the site's own call does: `supabase.from('early_access').insert(row).select()` with the
// public (publishable) key, and the answers it gets back.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalSupabase } from "../../tools/local-supabase/index.ts";
import { clientFor, DUPLICATE_MESSAGE, rest, startTestSupabase, uniqueEmail } from "../support/database.ts";

let backend: LocalSupabase;
beforeAll(async () => {
  backend = await startTestSupabase();
});
afterAll(() => backend.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// PostgREST's timestamps: json_agg's ISO form with a +00:00 offset.
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$/;

describe("a new address", () => {
  it("comes back as the stored row", async () => {
    const email = uniqueEmail();
    const answer = await clientFor(backend, backend.publishableKey)
      .from("early_access")
      .insert({ email, phone: "+33 6 12 34 56 78" })
      .select();

    expect(answer.error).toBeNull();
    expect(answer.status).toBe(201);
    expect(answer.data).toHaveLength(1);
    const [row] = answer.data!;
    expect(Object.keys(row)).toEqual(["id", "email", "phone", "created_at"]);
    expect(row.id).toMatch(UUID);
    expect(row.email).toBe(email);
    expect(row.phone).toBe("+33 6 12 34 56 78");
    expect(row.created_at).toMatch(TIMESTAMP);
    expect(Math.abs(Date.parse(row.created_at) - Date.now())).toBeLessThan(60_000);
  });

  it.each([
    // Surrounding spaces and capitals go; the address is otherwise kept.
    ["  Ada.Lovelace-ID@Example.COM  ", "ada.lovelace-id@example.com"],
    // Tabs and newlines count as surrounding space too.
    ["\tGrace-ID@Example.com\n", "grace-id@example.com"],
  ])("is stored trimmed and lowercased: %j", async (typed, stored) => {
    const id = crypto.randomUUID();
    const { data, error } = await clientFor(backend, backend.publishableKey)
      .from("early_access")
      .insert({ email: typed.replace("ID", id) })
      .select();
    expect(error).toBeNull();
    expect(data![0].email).toBe(stored.replace("id", id));
  });

  it.each([
    // An empty phone is stored as null.
    ["", null],
    // So is one of spaces only.
    ["   ", null],
    // A phone is stored trimmed, inner spaces kept.
    ["  +1 555 0100 ", "+1 555 0100"],
    // No phone at all.
    [null, null],
  ])("stores the phone %j as %j", async (phone, stored) => {
    const { data, error } = await clientFor(backend, backend.publishableKey)
      .from("early_access")
      .insert({ email: uniqueEmail(), phone })
      .select();
    expect(error).toBeNull();
    expect(data![0].phone).toBe(stored);
  });

  it("answers with PostgREST's headers", async () => {
    const response = await rest(backend, {
      method: "POST",
      path: "early_access?select=*",
      headers: { "content-profile": "public", prefer: "return=representation" },
      body: JSON.stringify({ email: uniqueEmail(), phone: null }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("content-range")).toBe("*/*");
    expect(response.headers.get("preference-applied")).toBe("return=representation");
    expect(response.headers.get("content-profile")).toBe("public");
    expect(response.headers.get("location")).toBeNull();
    expect(await response.json()).toHaveLength(1);
  });
});

describe("the same address again", () => {
  it.each([
    // Exactly as before.
    ["the same text", (email: string) => email],
    // Another case.
    ["upper case", (email: string) => email.toUpperCase()],
    // Surrounding spaces.
    ["surrounding spaces", (email: string) => `   ${email} `],
  ])("is refused as a duplicate when sent in %s", async (_, variant) => {
    const client = clientFor(backend, backend.publishableKey);
    const email = uniqueEmail();
    expect((await client.from("early_access").insert({ email }).select()).status).toBe(201);

    const again = await client
      .from("early_access")
      .insert({ email: variant(email) })
      .select();
    expect(again.status).toBe(409);
    expect(again.data).toBeNull();
    expect(again.error).toEqual({ code: "23505", details: null, hint: null, message: DUPLICATE_MESSAGE });
  });
});

describe("return=minimal", () => {
  it("answers 201 with an empty body through supabase-js", async () => {
    const answer = await clientFor(backend, backend.publishableKey)
      .from("early_access")
      .insert({ email: uniqueEmail() });
    expect(answer.error).toBeNull();
    expect(answer.status).toBe(201);
    expect(answer.data).toBeNull();
  });

  it("sends no body and confirms the preference", async () => {
    const response = await rest(backend, {
      method: "POST",
      headers: { prefer: "return=minimal" },
      body: JSON.stringify({ email: uniqueEmail() }),
    });
    expect(response.status).toBe(201);
    expect(await response.text()).toBe("");
    expect(response.headers.get("preference-applied")).toBe("return=minimal");
    expect(response.headers.get("content-type")).toBeNull();
  });
});

describe("an array body", () => {
  it("adds its one sign-up, as a single object would", async () => {
    const email = uniqueEmail();
    // supabase-js adds ?columns="email","phone" for arrays.
    const { data, error, status } = await clientFor(backend, backend.publishableKey)
      .from("early_access")
      .insert([{ email, phone: "1" }])
      .select("email, phone");
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(data).toEqual([{ email, phone: "1" }]);
  });

  it("of several sign-ups is refused with the public key, and stores none of them", async () => {
    const emails = [uniqueEmail("first"), uniqueEmail("second")];
    const { data, error, status } = await clientFor(backend, backend.publishableKey)
      .from("early_access")
      .insert(emails.map((email) => ({ email })))
      .select();
    expect(status).toBe(400);
    expect(data).toBeNull();
    expect(error).toEqual({
      code: "P0001",
      details: null,
      hint: "Send one row at a time.",
      message: "Only one sign-up per request",
    });
    for (const email of emails) {
      const { data: stored } = await clientFor(backend, backend.secretKey)
        .from("early_access")
        .select("email")
        .eq("email", email);
      expect(stored, `${email} is not stored`).toEqual([]);
    }
  });

  it.each([
    ["first", (probed: string) => [{ email: probed }, { email: uniqueEmail() }]],
    ["second", (probed: string) => [{ email: uniqueEmail() }, { email: probed }]],
  ])("of several sign-ups is refused alike whether its %s address is on the list or not", async (_, rows) => {
    const listed = uniqueEmail("listed");
    expect((await rest(backend, { method: "POST", body: JSON.stringify({ email: listed }) })).status).toBe(
      201,
    );
    const [probeListed, probeNew] = await Promise.all(
      [listed, uniqueEmail("unlisted")].map((probed) =>
        rest(backend, { method: "POST", body: JSON.stringify(rows(probed)) }),
      ),
    );

    expect([probeListed.status, probeNew.status]).toEqual([400, 400]);
    const answer = {
      code: "P0001",
      details: null,
      hint: "Send one row at a time.",
      message: "Only one sign-up per request",
    };
    expect(await probeListed.json()).toEqual(answer);
    expect(await probeNew.json()).toEqual(answer);
  });

  it("of several sign-ups is stored with the secret key (an import), in order", async () => {
    const emails = [uniqueEmail("first"), uniqueEmail("second")];
    const { data, error, status } = await clientFor(backend, backend.secretKey)
      .from("early_access")
      .insert([{ email: emails[0], phone: "1" }, { email: emails[1] }])
      .select("email, phone");
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(data).toEqual([
      { email: emails[0], phone: "1" },
      { email: emails[1], phone: null },
    ]);
  });

  it("inserts nothing when empty", async () => {
    const response = await rest(backend, {
      method: "POST",
      headers: { prefer: "return=representation" },
      body: "[]",
    });
    expect(response.status).toBe(201);
    expect(await response.text()).toBe("[]");
  });
});

// PostgREST accepts a cast on a selected column (`?select=email::text`) and applies it after the
// insert, in the same statement: a cast that fails there rolls the sign-up back. An attacker
// sends exactly this, so the local Supabase answers it as hosted PostgREST does, and the
// database's tests can send it.
describe("a cast in select", () => {
  const castCall = (email: string, select: string) => ({
    method: "POST",
    path: `early_access?select=${select}`,
    headers: { prefer: "return=representation" },
    body: JSON.stringify({ email }),
  });

  it("sends the column back cast, under its own name", async () => {
    const email = uniqueEmail();
    const response = await rest(backend, castCall(email, "email::text,phone::text"));
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual([{ email, phone: null }]);
  });

  it("that fails answers 400 with Postgres's error, and the sign-up is rolled back", async () => {
    const email = uniqueEmail();
    const response = await rest(backend, castCall(email, "email::int"));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      code: "22P02",
      message: `invalid input syntax for type integer: "${email}"`,
    });
    const { data } = await clientFor(backend, backend.secretKey)
      .from("early_access")
      .select("email")
      .eq("email", email);
    expect(data).toEqual([]);
  });

  it.each(["email::int(4)", "email::text;drop", "*::text", "email::"])(
    "refuses %s as not implemented, never running it",
    async (select) => {
      const email = uniqueEmail();
      const response = await rest(backend, castCall(email, select));
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: "PGRST127" });
      const { data } = await clientFor(backend, backend.secretKey)
        .from("early_access")
        .select("email")
        .eq("email", email);
      expect(data).toEqual([]);
    },
  );
});

describe("an upsert that merges duplicates (`Prefer: resolution=merge-duplicates`)", () => {
  const upsert = (key: string, email: string, phone: string) =>
    clientFor(backend, key)
      .from("early_access")
      .upsert({ email, phone }, { onConflict: "email" })
      .select("phone");

  it("updates the stored row with the secret key", async () => {
    const email = uniqueEmail("merged");
    expect((await upsert(backend.secretKey, email, "1")).data).toEqual([{ phone: "1" }]);
    const merged = await upsert(backend.secretKey, email, "2");
    expect([merged.status, merged.data]).toEqual([201, [{ phone: "2" }]]);
  });

  it("is refused to the publishable key, which may not update", async () => {
    const answer = await upsert(backend.publishableKey, uniqueEmail("merged"), "1");
    expect(answer.status).toBe(401);
    expect(answer.error).toMatchObject({
      code: "42501",
      message: "permission denied for table early_access",
    });
  });
});
