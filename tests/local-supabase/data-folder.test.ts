// The local Supabase's data folder: one owner, whatever the spelling of its name.
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
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
});
