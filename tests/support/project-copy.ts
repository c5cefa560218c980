// A copy of the project in a temporary folder, for tests that change it or run its commands as
// a developer would, without touching this one.
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

const PROJECT = resolve(import.meta.dirname, "../..");

/**
 * A new folder holding the project's files as git sees them (tracked, or new and not ignored),
 * and its installed packages (linked, not copied). The caller removes it.
 */
export function copyProject(prefix: string): string {
  const copy = mkdtempSync(join(tmpdir(), prefix));
  // As root, the local Supabase's PostgreSQL runs as the postgres user, who must pass through to
  // the copy's data folder.
  chmodSync(copy, 0o711);
  const { stdout } = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: PROJECT,
    encoding: "utf8",
  });
  for (const file of stdout.split("\0").filter(Boolean)) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(PROJECT, file), join(copy, file), { errorOnExist: false });
  }
  symlinkSync(join(PROJECT, "node_modules"), join(copy, "node_modules"), "dir");
  return copy;
}
