// The local Supabase's data folder: one owner, whatever the spelling of its name, and none once
// that owner is killed, even while it lingers as a zombie.
import { spawn } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { DataFolderLockedError, dataFolder } from "../../tools/local-supabase/database/data-folder.ts";
import { openLocalDatabase } from "../../tools/local-supabase/database/local-database.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "early-access-folder-")));
// As root, PostgreSQL runs as the postgres user, who must pass through to the data folders.
chmodSync(root, 0o711);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the folder a data folder's name means", () => {
  const folder = join(root, "named");
  mkdirSync(folder);
  symlinkSync(folder, join(root, "link"));

  it.each([
    ["a path", folder],
    ["a trailing slash", `${folder}/`],
    ["file:// and an absolute path", `file://${folder}`],
    ["a relative path", relative(process.cwd(), folder)],
    ["file:// and a relative path", `file://${relative(process.cwd(), folder)}`],
    ["a symlink", join(root, "link")],
    ["dots", join(root, "link", "..", "named", ".")],
  ])("is the same for %s", (_, spelling) => {
    expect(dataFolder(spelling)).toBe(folder);
  });

  it.each([null, "", "memory://", "memory://anything"])("is none, a throwaway one, for %j", (spelling) => {
    expect(dataFolder(spelling)).toBeNull();
  });

  it("is refused for file:// alone", () => {
    expect(() => dataFolder("file://")).toThrow();
  });
});

describe("a data folder's owner", () => {
  it("keeps it whichever spelling a second opener uses, before that one touches a file", async () => {
    const folder = join(root, "owned");
    const owner = await openLocalDatabase({ dataDir: folder });
    try {
      const before = readdirSync(folder).sort();
      for (const spelling of [`file://${folder}`, `${folder}/`, relative(process.cwd(), folder)]) {
        await expect(openLocalDatabase({ dataDir: spelling }), spelling).rejects.toThrow(
          DataFolderLockedError,
        );
      }
      expect(readdirSync(folder).sort()).toEqual(before);
      // The owner still works.
      expect((await owner.query<{ one: number }>("select 1 as one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await owner.close();
    }
  });

  it("refuses a folder the previous engine (PGlite) wrote, rather than start PostgreSQL on it", async () => {
    const folder = join(root, "pglite");
    mkdirSync(folder);
    // PGlite kept its cluster in the data folder itself.
    writeFileSync(join(folder, "PG_VERSION"), "17\n");
    await expect(openLocalDatabase({ dataDir: folder })).rejects.toThrow(
      /previous embedded engine \(PGlite\)/,
    );
  });

  it.skipIf(process.platform !== "linux")(
    "is no owner once killed, even as a zombie its parent never reaps: the folder reopens at once, losing nothing",
    async () => {
      const folder = join(root, "zombie");
      const email = `zombie-${process.pid}@example.com`;
      // The owner: a backend's database on the folder, which signs a visitor up, says so, and
      // waits. It runs under a parent that never reaps a child (a shell replaced by `sleep`),
      // as under a container's PID 1 that is no init.
      const ownerScript = `
        try {
          const { openLocalDatabase } = await import(${JSON.stringify(pathToFileURL(LOCAL_DATABASE).href)});
          const db = await openLocalDatabase({ dataDir: ${JSON.stringify(folder)} });
          await db.transaction(async (tx) => {
            // As PostgREST runs a visitor's sign-up behind Supabase's edge.
            await tx.query("select set_config('request.headers', $1, true), set_config('role', 'anon', true)", [
              JSON.stringify({ "cf-connecting-ip": "203.0.113.7" }),
            ]);
            await tx.query("insert into public.early_access (email) values ($1)", [${JSON.stringify(email)}]);
          });
          console.log("owner " + process.pid);
          setInterval(() => {}, 60_000);
        } catch (error) {
          console.log("failed: " + error.stack);
          process.exit(1);
        }`;
      const parent = spawn("sh", ["-c", `"$NODE" --input-type=module -e "$SCRIPT" & exec sleep 600`], {
        env: { ...process.env, NODE: process.execPath, SCRIPT: ownerScript },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      parent.stderr!.on("data", (chunk: Buffer) => (output += chunk));
      try {
        const ownerPid = await new Promise<number>((resolve, reject) => {
          parent.stdout!.on("data", (chunk: Buffer) => {
            output += chunk;
            const pid = /owner (\d+)/.exec(output)?.[1];
            if (pid) resolve(Number(pid));
            if (output.includes("failed: ")) reject(new Error(`The owner failed:\n${output}`));
          });
          parent.on("exit", () => reject(new Error(`The owner's parent exited:\n${output}`)));
        });

        process.kill(ownerPid, "SIGKILL");
        // A zombie for real: its parent (sleep) never waits for it.
        await expect.poll(() => stateOf(ownerPid), { timeout: 10_000, interval: 20 }).toBe("Z");

        // At once: no waiting for the zombie to go, which it never would.
        const reopened = await openLocalDatabase({ dataDir: folder });
        try {
          expect(stateOf(ownerPid), "still a zombie as the folder reopened").toBe("Z");
          const { rows } = await reopened.transaction(async (tx) => {
            await tx.query("select set_config('role', 'service_role', true)");
            return tx.query<{ email: string }>("select email from public.early_access where email = $1", [
              email,
            ]);
          });
          expect(rows, "the killed owner's sign-up").toEqual([{ email }]);
        } finally {
          await reopened.close();
        }
      } finally {
        parent.kill("SIGKILL");
      }
    },
    120_000,
  );
});

/** The file the owner's process imports (the test's own module graph runs through Vite). */
const LOCAL_DATABASE = join(import.meta.dirname, "../../tools/local-supabase/database/local-database.ts");

/** A process's state letter from /proc/<pid>/stat (Z: a zombie); null when it is gone. */
function stateOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] ?? null;
  } catch {
    return null;
  }
}
