// The local Supabase on a data folder keeps its rows across a restart, applies each migration
// exactly once however often it starts, runs its seed only when it creates the database, and
// runs its server with every commit flushed to disk before it is acknowledged.
import { chmodSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openLocalDatabase } from "../../tools/local-supabase/database/local-database.ts";
import { startLocalSupabase } from "../../tools/local-supabase/index.ts";
import { clientFor, uniqueEmail } from "../support/database.ts";

const root = mkdtempSync(join(tmpdir(), "early-access-data-"));
// As root, PostgreSQL runs as the postgres user, who must pass through to the data folder.
chmodSync(root, 0o711);
const dataDir = join(root, "data");
afterAll(() => rmSync(root, { recursive: true, force: true }));

const migrationFiles = readdirSync(new URL("../../supabase/migrations/", import.meta.url)).filter((file) =>
  file.endsWith(".sql"),
);

// Counts the seed's runs in the database itself, where the secret key can read them.
const SEED = `
  create table if not exists public.seed_runs (n integer);
  grant select on public.seed_runs to service_role;
  insert into public.seed_runs values (1);
`;

async function startOnDataDir(log: string[]) {
  const database = await openLocalDatabase({ dataDir, log: (line) => log.push(line), seed: SEED });
  return startLocalSupabase({ database, port: 0, log: () => {} });
}

describe("a restart on the same data folder", () => {
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
    const secret = clientFor(second, second.secretKey);
    const { data } = await secret.from("early_access").select("email").eq("email", email);
    const { data: seedRuns } = await secret.from("seed_runs").select("n");
    await second.close();

    expect(data).toEqual([{ email }]);
    expect(firstLog).toEqual(migrationFiles.map((file) => `Applied migration ${file}`));
    expect(secondLog).toEqual([]);
    expect(seedRuns).toHaveLength(1);
  });

  it("runs a server that flushes every commit to disk before acknowledging it", async () => {
    const database = await openLocalDatabase({ dataDir });
    try {
      const { rows } = await database.query<{ fsync: string; synchronous_commit: string }>(
        "select current_setting('fsync') as fsync, current_setting('synchronous_commit') as synchronous_commit",
      );
      expect(rows).toEqual([{ fsync: "on", synchronous_commit: "on" }]);
    } finally {
      await database.close();
    }
  });
});
