// Reading the list as its owner does, with the secret key: order, limit and offset,
// Prefer: count=exact, and the `eq`, `gte`, `in` and `is.null` filters (and their `not.`), on tables and views, answered as PostgREST
// answers them (RangeQuery.hs, Response.hs, Statements.hs). What the local Supabase lacks
// answers PGRST127.
import type { SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { MAX_ROWS } from "../../tools/local-supabase/postgrest.ts";
import { clientFor, openTestDatabase, rest } from "../support/database.ts";

/**
 * Five sign-ups, oldest first; one without a phone. The phones sort alike in the C locale and in
 * a language's (digits, then letters).
 */
const ROWS = [
  { email: "ada@example.com", phone: "20 7946 0000", created_at: "2027-03-01T09:00:00+00:00" },
  { email: "bob@example.com", phone: null, created_at: "2027-03-02T09:00:00+00:00" },
  { email: "cy@example.com", phone: 'ext. "12", (office)\\b', created_at: "2027-03-03T09:00:00+00:00" },
  { email: "di@example.com", phone: "555", created_at: "2027-03-04T09:00:00+00:00" },
  { email: "ed@example.com", phone: "1", created_at: "2027-03-05T09:00:00+00:00" },
];
const emails = (order: number[]) => order.map((index) => ROWS[index]!.email);

let backend: LocalSupabase;
let owner: Database;
let secret: SupabaseClient;
beforeAll(async () => {
  let database: Database;
  ({ database, owner } = await openTestDatabase());
  for (const { email, phone, created_at } of ROWS) {
    await owner.query("insert into public.early_access (email, phone, created_at) values ($1, $2, $3)", [
      email,
      phone,
      created_at,
    ]);
  }
  backend = await startLocalSupabase({ database, port: 0, log: () => {} });
  secret = clientFor(backend, backend.secretKey);
});
afterAll(() => backend.close());

/** A GET (or other call) of early_access with the secret key; `query` after the `?`. */
const read = (query: string, headers: Record<string, string> = {}, method = "GET") =>
  rest(backend, { method, path: `early_access?${query}`, key: backend.secretKey, headers });

async function readEmails(query: string, headers: Record<string, string> = {}) {
  const response = await read(`select=email&${query}`, headers);
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return ((await response.json()) as Array<{ email: string }>).map(({ email }) => email);
}

describe("order", () => {
  it.each([
    ["created_at.desc", [4, 3, 2, 1, 0]],
    ["created_at.asc", [0, 1, 2, 3, 4]],
    // No direction is ascending, as in SQL.
    ["created_at", [0, 1, 2, 3, 4]],
    // Nulls sort last ascending and first descending unless told otherwise.
    ["phone.desc,email", [1, 2, 3, 0, 4]],
    ["phone.desc.nullslast,email", [2, 3, 0, 4, 1]],
    ["phone.asc.nullsfirst,email.desc", [1, 4, 0, 3, 2]],
    ["phone.nullsfirst", [1, 4, 0, 3, 2]],
  ])("order=%s sorts the rows so", async (order, expected) => {
    expect(await readEmails(`order=${order}`)).toEqual(emails(expected));
  });

  it("is what supabase-js's .order() sends", async () => {
    const { data, error } = await secret
      .from("early_access")
      .select("email")
      .order("phone", { ascending: false, nullsFirst: false })
      .order("email");
    expect(error).toBeNull();
    expect(data!.map(({ email }) => email)).toEqual(emails([2, 3, 0, 4, 1]));
  });

  it("refuses a term it cannot parse as not implemented", async () => {
    const response = await read("order=created_at.sideways");
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe("PGRST127");
  });

  it("on a column that does not exist fails as Postgres does", async () => {
    const response = await read("order=nope");
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe("42703");
  });
});

describe("limit and offset", () => {
  it.each([
    ["limit=2", [0, 1], "0-1/*"],
    ["limit=2&offset=1", [1, 2], "1-2/*"],
    ["offset=3", [3, 4], "3-4/*"],
    ["limit=0", [], "*/*"],
    ["offset=9", [], "*/*"],
  ])("%s gives those rows, with Content-Range %s and 200", async (query, expected, range) => {
    const response = await read(`select=email&order=created_at&${query}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-range")).toBe(range);
    expect(((await response.json()) as Array<{ email: string }>).map(({ email }) => email)).toEqual(
      emails(expected),
    );
  });

  it("is what supabase-js's .range() sends", async () => {
    const { data, error } = await secret.from("early_access").select("email").order("created_at").range(1, 3);
    expect(error).toBeNull();
    expect(data!.map(({ email }) => email)).toEqual(emails([1, 2, 3]));
  });
});

describe("Prefer: count=exact", () => {
  const counted = (query: string, headers: Record<string, string> = {}, method = "GET") =>
    read(`select=email&order=created_at&${query}`, { prefer: "count=exact", ...headers }, method);

  it.each([
    // Every row in the answer: 200.
    ["", 200, "0-4/5"],
    // Fewer rows than the total: 206 Partial Content.
    ["limit=2", 206, "0-1/5"],
    ["limit=2&offset=2", 206, "2-3/5"],
    // No row matches: the total is 0, and nothing was left out.
    ["email=eq.nobody@example.com", 200, "*/0"],
    // An offset at the end leaves every row out, but is no error (only past the end is).
    ["offset=5", 206, "*/5"],
    // The count follows the filters, not the page.
    ["created_at=gte.2027-03-02T00:00:00Z&limit=1", 206, "0-0/4"],
  ])("?%s answers %i with Content-Range %s", async (query, status, range) => {
    const response = await counted(query);
    expect(response.status).toBe(status);
    expect(response.headers.get("content-range")).toBe(range);
    expect(response.headers.get("preference-applied")).toBe("count=exact");
  });

  it("answers 416 with PostgREST's body for an offset past the total", async () => {
    const response = await counted("offset=6");
    expect(response.status).toBe(416);
    expect(response.headers.get("content-range")).toBe("*/5");
    expect(await response.json()).toEqual({
      code: "PGRST103",
      details: "An offset of 6 was requested, but there are only 5 rows.",
      hint: null,
      message: "Requested range not satisfiable",
    });
  });

  it("counts without rows through supabase-js, as the owner's command counts", async () => {
    const { count, data, error, status } = await secret
      .from("early_access")
      .select("*", { count: "exact" })
      .limit(0)
      .gte("created_at", "2027-03-03T00:00:00Z");
    expect({ count, data, error, status }).toEqual({ count: 3, data: [], error: null, status: 206 });
  });

  it("gives supabase-js the total beside a page", async () => {
    const { count, data, status } = await secret
      .from("early_access")
      .select("email", { count: "exact" })
      .order("created_at", { ascending: false })
      .range(0, 1);
    expect({ count, status }).toEqual({ count: 5, status: 206 });
    expect(data!.map(({ email }) => email)).toEqual(emails([4, 3]));
  });

  it("reports the rows a delete removed, as */n", async () => {
    await owner.query("insert into public.early_access (email) values ('temporary@example.com')");
    const response = await rest(backend, {
      method: "DELETE",
      path: "early_access?email=eq.temporary@example.com",
      key: backend.secretKey,
      headers: { prefer: "return=representation,count=exact" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-range")).toBe("*/1");
    expect(response.headers.get("preference-applied")).toBe("return=representation, count=exact");
    expect((await response.json()).map(({ email }: { email: string }) => email)).toEqual([
      "temporary@example.com",
    ]);
  });

  it("without the preference, reports no total and never 206", async () => {
    const response = await read("select=email&limit=2");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-range")).toBe("0-1/*");
    expect(response.headers.get("preference-applied")).toBeNull();
  });
});

describe("filters", () => {
  it.each([
    ["created_at=gte.2027-03-04T00:00:00Z", [3, 4]],
    ["email=eq.cy@example.com", [2]],
    ["email=eq.di@example.com&created_at=gte.2027-03-04T00:00:00Z", [3]],
    ["email=not.eq.ada@example.com", [1, 2, 3, 4]],
    // An `in` list, bare values or in double quotes (supabase-js quotes those with `,()`).
    ['email=in.(ada@example.com,"cy@example.com",nobody@example.com)', [0, 2]],
    ["email=not.in.(ada@example.com,bob@example.com,cy@example.com)", [3, 4]],
    ["email=in.()", []],
    // In quotes, a comma, parentheses, and `\` before a quote or a backslash.
    [`phone=in.(${encodeURIComponent('"ext. \\"12\\", (office)\\\\b",555')})`, [2, 3]],
    ["phone=is.null", [1]],
    ["phone=not.is.null", [0, 2, 3, 4]],
  ])("%s keeps those rows", async (query, expected) => {
    expect(await readEmails(`order=created_at&${query}`)).toEqual(emails(expected));
  });

  it("are what supabase-js's .in() and .not() send", async () => {
    const { data, error } = await secret
      .from("early_access")
      .select("email")
      .in("email", ["ada@example.com", "di@example.com", "(odd, one)"])
      .not("phone", "is", null)
      .order("email");
    expect(error).toBeNull();
    expect(data!.map(({ email }) => email)).toEqual(emails([0, 3]));
  });

  it.each([
    ["email=like.*example.com", "PGRST127"],
    ["created_at=lt.2027-03-02T09:00:00Z", "PGRST127"],
    ["email=in.(a,b", "PGRST127"],
    ['email=in.("a"b)', "PGRST127"],
    ["phone=is.true", "PGRST127"],
    ["or=(email.eq.a,email.eq.b)", "PGRST127"],
    ["select=email->x", "PGRST127"],
    ["limit=-1", "PGRST127"],
    ["limit=two", "PGRST127"],
    // Aggregates are off on Supabase (db-aggregates-enabled), so it answers so.
    ["select=count()", "PGRST123"],
  ])("%s is refused with %s rather than ignored", async (query, code) => {
    const response = await read(query);
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe(code);
  });

  it.each([
    ["GET", { prefer: "count=planned" }],
    ["GET", { range: "0-1" }],
    ["HEAD", {}],
    ["PATCH", {}],
  ])("%s with %j is refused as not implemented", async (method, headers) => {
    const response = await read("select=email&email=eq.ada@example.com", headers, method);
    expect(response.status).toBe(400);
    if (method !== "HEAD") expect((await response.json()).code).toBe("PGRST127");
  });
});

describe("a view", () => {
  it("is read as a table is: select, filters, order and limit", async () => {
    const { data, error } = await secret
      .from("early_access_with_marks")
      .select("email, review")
      .gte("created_at", "2027-03-02T00:00:00Z")
      .order("created_at", { ascending: false })
      .limit(2);
    expect(error).toBeNull();
    expect(data).toEqual(emails([4, 3]).map((email) => ({ email, review: null })));
  });
});

describe("max rows", () => {
  let many: LocalSupabase;
  beforeAll(async () => {
    const { database, owner: manyOwner } = await openTestDatabase();
    await manyOwner.exec(
      `insert into public.early_access (email) select 'person' || n || '@example.com' from generate_series(1, ${MAX_ROWS + 5}) n`,
    );
    many = await startLocalSupabase({ database, port: 0, log: () => {} });
  });
  afterAll(() => many.close());

  it(`is ${MAX_ROWS}, Supabase's default, as supabase/config.toml says`, async () => {
    const { readFileSync } = await import("node:fs");
    const config = readFileSync(new URL("../../supabase/config.toml", import.meta.url), "utf8");
    expect(config).toMatch(new RegExp(`^max_rows = ${MAX_ROWS}$`, "m"));
  });

  it("cuts a read to that many rows; the count then shows what was left out", async () => {
    const response = await rest(many, {
      path: "early_access?select=email",
      key: many.secretKey,
      headers: { prefer: "count=exact" },
    });
    expect(response.status).toBe(206);
    expect(response.headers.get("content-range")).toBe(`0-${MAX_ROWS - 1}/${MAX_ROWS + 5}`);
    expect(await response.json()).toHaveLength(MAX_ROWS);
  });

  it("still lets a range past it be read", async () => {
    const { data, count } = await clientFor(many, many.secretKey)
      .from("early_access")
      .select("email", { count: "exact" })
      .range(MAX_ROWS, MAX_ROWS + 10);
    expect(count).toBe(MAX_ROWS + 5);
    expect(data).toHaveLength(5);
  });
});
