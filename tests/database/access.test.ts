// What each key may do, decided by the database (grants and row level security): the public
// anon key only adds sign-ups and reads back its own; the service_role key does everything.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientFor, rest, startTestSupabase, uniqueEmail, type TestSupabase } from "../support/database.ts";

let backend: TestSupabase;
let existingEmail: string;
beforeAll(async () => {
  backend = await startTestSupabase();
  existingEmail = uniqueEmail("existing");
  const { error } = await clientFor(backend, backend.publishableKey)
    .from("early_access")
    .insert({ email: existingEmail, phone: "1" });
  expect(error).toBeNull();
});
afterAll(() => backend.close());

const PERMISSION_DENIED = {
  code: "42501",
  details: null,
  hint: null,
  message: "permission denied for table early_access",
};

/** The public key's answer to anything but a sign-up (supabase/schemas/05_request_gate.sql). */
const GATE_REFUSAL = {
  ...PERMISSION_DENIED,
  message: "permission denied: this key may only add a sign-up (POST /early_access)",
};

async function storedRow(email: string) {
  const { data, error } = await clientFor(backend, backend.secretKey)
    .from("early_access")
    .select("*")
    .eq("email", email);
  expect(error).toBeNull();
  return data![0] ?? null;
}

describe("the anon key", () => {
  const anon = () => clientFor(backend, backend.publishableKey);

  it("cannot list the sign-ups", async () => {
    const { data, error, status } = await anon().from("early_access").select("*");
    expect(status).toBe(401);
    expect(error).toEqual(GATE_REFUSAL);
    expect(data).toBeNull();
  });

  it("cannot read a sign-up it knows the address of", async () => {
    const { data, error } = await anon().from("early_access").select("*").eq("email", existingEmail);
    expect(error).toEqual(GATE_REFUSAL);
    expect(data).toBeNull();
  });

  it("cannot update a sign-up, by any means (the site never asks to: the database refuses it)", async () => {
    const before = await storedRow(existingEmail);
    const update = backend.owner.transaction(async (tx) => {
      await tx.exec("set local role anon");
      await tx.query("update public.early_access set phone = '999' where email = $1", [existingEmail]);
    });
    await expect(update).rejects.toMatchObject({ code: "42501", message: PERMISSION_DENIED.message });
    expect(await storedRow(existingEmail)).toEqual(before);
  });

  it("cannot delete a sign-up", async () => {
    const { error, status } = await anon().from("early_access").delete().eq("email", existingEmail);
    expect(status).toBe(401);
    expect(error).toEqual(GATE_REFUSAL);
    expect(await storedRow(existingEmail)).not.toBeNull();
  });

  it.each([
    // A chosen id.
    ["id", crypto.randomUUID()],
    // A chosen creation time, which would defeat the read-back policy.
    ["created_at", "2020-01-01T00:00:00+00:00"],
  ])("cannot set %s, with or without reading back", async (column, value) => {
    const email = uniqueEmail();
    const withReadBack = await anon()
      .from("early_access")
      .insert({ email, [column]: value })
      .select();
    const withoutReadBack = await anon()
      .from("early_access")
      .insert({ email, [column]: value });
    for (const answer of [withReadBack, withoutReadBack]) {
      expect(answer.status).toBe(401);
      expect(answer.error).toEqual(PERMISSION_DENIED);
    }
    expect(await storedRow(email)).toBeNull();
  });
});

describe("the service_role key", () => {
  const service = () => clientFor(backend, backend.secretKey);

  it("lists the sign-ups", async () => {
    const { data, error, status } = await service().from("early_access").select("email, phone");
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toContainEqual({ email: existingEmail, phone: "1" });
  });

  it("may update a sign-up in the database, which normalises it again", async () => {
    const email = uniqueEmail();
    await service().from("early_access").insert({ email });
    await backend.owner.transaction(async (tx) => {
      await tx.exec("set local role service_role");
      await tx.query("update public.early_access set email = $1, phone = ' 42 ' where email = $2", [
        `  ${email.toUpperCase()}`,
        email,
      ]);
    });
    expect(await storedRow(email)).toMatchObject({ email, phone: "42" });
  });

  it("deletes a sign-up", async () => {
    const email = uniqueEmail();
    await service().from("early_access").insert({ email });
    const { error, status } = await service().from("early_access").delete().eq("email", email);
    expect(error).toBeNull();
    expect(status).toBe(204);
    expect(await storedRow(email)).toBeNull();
  });

  it("reports the rows a read returns in Content-Range", async () => {
    const response = await rest(backend, {
      path: `early_access?email=eq.${existingEmail}`,
      key: backend.secretKey,
    });
    expect(response.headers.get("content-range")).toBe("0-0/*");
    const none = await rest(backend, {
      path: "early_access?email=eq.nobody@example.com",
      key: backend.secretKey,
    });
    expect(none.headers.get("content-range")).toBe("*/*");
  });
});

describe("the helpers behind the sign-up rules", () => {
  it.each([
    "sign_up_limits",
    "sign_up_scopes",
    "sign_up_counting",
    "failure_sketches",
    "sign_up_sources",
    "client_key_secret",
  ])("are out of the API's reach, even with the secret key: %s", async (table) => {
    const unknown = await rest(backend, { path: table, key: backend.secretKey });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).code).toBe("PGRST205");

    const otherSchema = await rest(backend, {
      path: table,
      key: backend.secretKey,
      headers: { "accept-profile": "private" },
    });
    expect(otherSchema.status).toBe(406);
    expect((await otherSchema.json()).code).toBe("PGRST106");
  });
});

describe("the failures' cells", () => {
  it.each(["anon", "authenticated", "service_role"])(
    "%s can neither read nor move a cell, nor charge a failure, even with the SQL a request could run",
    async (role) => {
      const { rows } = await backend.owner.query<{ cell: string; oid: number }>(
        `select c.oid::regclass::text as cell, c.oid::integer as oid from pg_catalog.pg_class c
          where c.relnamespace = 'private'::regnamespace and c.relkind = 'S' limit 1`,
      );
      const { cell, oid } = rows[0]!;
      for (const sql of [
        `select pg_sequence_last_value('${cell}')`,
        `select setval('${cell}', 0)`,
        `select nextval('${cell}')`,
        // By its number, which needs no use of the schema: the cell's own privileges refuse it.
        `select nextval(${oid})`,
        "select private.charge_failure('192.0.2.1')",
      ]) {
        await expect(
          backend.owner.transaction(async (tx) => {
            await tx.query("select set_config('role', $1, true)", [role]);
            await tx.query(sql);
          }),
          sql,
        ).rejects.toMatchObject({ code: "42501" });
      }
    },
  );
});
