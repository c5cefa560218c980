// The server's log in the cluster's folder: capped, however many statements fail, with the
// latest lines still there; and a server that cannot start says why, from that log.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startCluster, SUPERUSER } from "../../tools/local-supabase/database/cluster.ts";
import { connectPool } from "../../tools/local-supabase/database/pool.ts";
import {
  PREVIOUS_SERVER_LOG,
  SERVER_LOG,
  SERVER_LOG_FILE_CAP,
} from "../../tools/local-supabase/database/server-log.ts";

const root = mkdtempSync(join(tmpdir(), "server-log-"));
// As root, PostgreSQL runs as the postgres user, who must pass through to the cluster.
chmodSync(root, 0o711);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The bytes of every log file in the folder. */
const logBytes = (folder: string) =>
  readdirSync(folder)
    .filter((name) => name.startsWith(SERVER_LOG))
    .reduce((sum, name) => sum + statSync(join(folder, name)).size, 0);

describe("the server's log", () => {
  it("stays under twice its cap through a flood of failed statements, the latest in server.log", async () => {
    const folder = join(root, "flooded");
    const cluster = await startCluster({ folder, durable: false });
    const db = connectPool({ url: cluster.url(SUPERUSER, "postgres"), poolSize: 4 });
    try {
      // Each failure logs its error and its statement's text: about 8 KB here, so that the
      // flood writes several times the cap (4 MB) in a few seconds.
      const padding = "x".repeat(8_000);
      const failures = Math.ceil((4 * SERVER_LOG_FILE_CAP) / padding.length);
      for (let sent = 0; sent < failures; sent += 4) {
        await Promise.all(
          Array.from({ length: 4 }, (_, index) =>
            expect(db.query(`select 1 / 0 -- ${sent + index} ${padding}`)).rejects.toThrow(
              "division by zero",
            ),
          ),
        );
      }
      await expect(db.query("select 1 / 0 -- the last")).rejects.toThrow();
    } finally {
      await db.close();
      await cluster.stop();
    }

    expect(readdirSync(folder)).toContain(PREVIOUS_SERVER_LOG);
    expect(logBytes(folder)).toBeLessThanOrEqual(2 * SERVER_LOG_FILE_CAP);
    expect(readFileSync(join(folder, SERVER_LOG), "utf8")).toContain("select 1 / 0 -- the last");
  });

  it("tells why a server did not start", async () => {
    const start = startCluster({
      folder: join(root, "unstartable"),
      durable: false,
      settings: { shared_buffers: "a lot" },
    });
    await expect(start).rejects.toThrow(
      /PostgreSQL did not start[^]*invalid value for parameter "shared_buffers"/,
    );
  });
});
