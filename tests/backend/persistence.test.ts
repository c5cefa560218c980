// A backend on a data directory keeps its rows across a restart, and applies each migration
// exactly once however often it starts.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openPGlite } from "../../server/backend/database/pglite.ts";
import { clientFor, startTestBackend, uniqueEmail } from "./helpers.ts";

const dataDir = mkdtempSync(join(tmpdir(), "early-access-data-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const migrationFiles = readdirSync(new URL("../../supabase/migrations/", import.meta.url)).filter((file) =>
  file.endsWith(".sql"),
);

describe("a restart on the same data directory", () => {
  it("finds every row, and applies no migration twice", async () => {
    const email = uniqueEmail();
    const firstLog: string[] = [];
    const first = await startTestBackend({ dataDir, log: (line) => firstLog.push(line) });
    expect(first.dataDir).toBe(dataDir);
    expect(
      (await clientFor(first, first.anonKey).from("early_access").insert({ email }).select()).status,
    ).toBe(201);
    await first.close();

    const secondLog: string[] = [];
    const second = await startTestBackend({ dataDir, log: (line) => secondLog.push(line) });
    const { data } = await clientFor(second, second.serviceRoleKey)
      .from("early_access")
      .select("email")
      .eq("email", email);
    await second.close();

    expect(data).toEqual([{ email }]);
    expect(firstLog.filter((line) => line.startsWith("Applied migration"))).toEqual(
      migrationFiles.map((file) => `Applied migration ${file}`),
    );
    expect(secondLog.filter((line) => line.startsWith("Applied migration"))).toEqual([]);

    const db = await openPGlite(dataDir, () => {});
    const { rows } = await db.query<{ file: string }>(
      "select version || '_' || name || '.sql' as file from supabase_migrations.schema_migrations order by version",
    );
    await db.close();
    expect(rows.map(({ file }) => file)).toEqual(migrationFiles);
  });
});
