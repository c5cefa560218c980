// PGlite on a data directory keeps its rows across a restart, applies each migration exactly
// once however often it starts, and runs its seed only when it creates the database.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openPGlite } from "../../server/backend/database/pglite.ts";
import { startBackend } from "../../server/backend/index.ts";
import { clientFor, uniqueEmail } from "./helpers.ts";

const dataDir = mkdtempSync(join(tmpdir(), "early-access-data-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const migrationFiles = readdirSync(new URL("../../supabase/migrations/", import.meta.url)).filter((file) =>
  file.endsWith(".sql"),
);

// Counts the seed's runs in the database itself.
const SEED = `
  create table if not exists public.seed_runs (n integer);
  insert into public.seed_runs values (1);
`;

async function startOnDataDir(log: string[]) {
  const database = await openPGlite({ dataDir, log: (line) => log.push(line), seed: SEED });
  return startBackend({ database, port: 0, log: () => {} });
}

describe("a restart on the same data directory", () => {
  it("finds every row, applies no migration twice, and seeds only the new database", async () => {
    const email = uniqueEmail();
    const firstLog: string[] = [];
    const first = await startOnDataDir(firstLog);
    expect(
      (await clientFor(first, first.publishableKey).from("early_access").insert({ email }).select()).status,
    ).toBe(201);
    await first.close();

    const secondLog: string[] = [];
    const second = await startOnDataDir(secondLog);
    const { data } = await clientFor(second, second.secretKey)
      .from("early_access")
      .select("email")
      .eq("email", email);
    await second.close();

    expect(data).toEqual([{ email }]);
    expect(firstLog).toEqual(migrationFiles.map((file) => `Applied migration ${file}`));
    expect(secondLog).toEqual([]);

    const db = await openPGlite({ dataDir });
    const { rows } = await db.query<{ file: string }>(
      "select version || '_' || name || '.sql' as file from supabase_migrations.schema_migrations order by version",
    );
    const { rows: seedRuns } = await db.query("select n from public.seed_runs");
    await db.close();
    expect(rows.map(({ file }) => file)).toEqual(migrationFiles);
    expect(seedRuns).toHaveLength(1);
  });
});
