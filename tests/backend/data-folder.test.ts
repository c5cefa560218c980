// The embedded backend's data folder: one owner, whatever the spelling of its name, and every
// acknowledged commit on disk before it is acknowledged.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { DataDirLockedError, dataFolder } from "../../server/backend/database/data-dir-lock.ts";
import { openPGlite } from "../../server/backend/database/pglite.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "early-access-folder-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the folder PGlite opens", () => {
  const folder = join(root, "named");
  mkdirSync(folder);
  symlinkSync(folder, join(root, "link"));

  it.each([
    ["a path", folder],
    ["a trailing slash", `${folder}/`],
    // PGlite takes `file://` off and opens what is left.
    ["file:// and an absolute path", `file://${folder}`],
    ["a relative path", relative(process.cwd(), folder)],
    ["file:// and a relative path", `file://${relative(process.cwd(), folder)}`],
    ["a symlink", join(root, "link")],
    ["dots", join(root, "link", "..", "named", ".")],
  ])("is the same for %s", (_, spelling) => {
    expect(dataFolder(spelling)).toBe(folder);
  });

  it.each([null, "", "memory://", "memory://anything"])("is none, in memory, for %j", (spelling) => {
    expect(dataFolder(spelling)).toBeNull();
  });

  it.each(["idb://x", "opfs-ahp://x", "file://"])("is refused for %s", (spelling) => {
    expect(() => dataFolder(spelling)).toThrow();
  });
});

describe("a data folder's owner", () => {
  it("keeps it whichever spelling a second opener uses, before that one touches a file", async () => {
    const folder = join(root, "owned");
    const owner = await openPGlite({ dataDir: folder });
    try {
      for (const spelling of [`file://${folder}`, `${folder}/`, relative(process.cwd(), folder)]) {
        await expect(openPGlite({ dataDir: spelling }), spelling).rejects.toThrow(DataDirLockedError);
      }
      // The owner still works.
      expect((await owner.query<{ one: number }>("select 1 as one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await owner.close();
    }
  });
});

// Whether fsync(2) reaches the disk can only be seen from outside the process: strace counts
// the calls. CI installs strace; a machine without it skips this, saying so.
const strace = spawnSync("strace", ["-V"]).status === 0;
if (!strace && !process.env.CI)
  console.warn("⚠ SKIPPED: the fsync test needs strace (apt-get install strace).");

describe.runIf(strace || process.env.CI)("an acknowledged commit", () => {
  it("is on disk: PostgreSQL's flush at each commit reaches fsync(2)", () => {
    const commits = 50;
    const pglite = fileURLToPath(new URL("../../server/backend/database/pglite.ts", import.meta.url));
    const script = `
      const { openPGlite } = await import(${JSON.stringify(pglite)});
      const db = await openPGlite({ dataDir: ${JSON.stringify(join(root, "durable"))} });
      await db.exec("create table if not exists t (n int)");
      process.stderr.write("ready\\n");
      for (let n = 0; n < ${commits}; n++)
        await db.transaction((tx) => tx.query("insert into t values ($1)", [n]));
      await db.close();`;
    // Only the calls made after set-up count: strace's log is cut at the child's "ready".
    const { status, stderr } = spawnSync(
      "strace",
      [
        "-f",
        "-e",
        "trace=fsync,fdatasync,write",
        "-e",
        "signal=none",
        process.execPath,
        "--input-type=module",
        "-e",
        script,
      ],
      { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
    );
    expect(status, stderr.slice(-2000)).toBe(0);
    const afterSetUp = stderr.slice(stderr.indexOf('"ready\\n"'));
    const fsyncs = afterSetUp.match(/\bf(?:data)?sync\(\d+\)\s+= 0/g) ?? [];
    expect(fsyncs.length, "fsync calls for 50 commits").toBeGreaterThanOrEqual(commits);
  });
});
