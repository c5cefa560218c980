// The builds the hosts' tests upload: the run's build as a host names its files, and changed
// copies of it (a file more, a file less) in a test's own folder.
import { cpSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The files of a build as a host names them: `/` and the path from the build's folder, sorted. */
export function filesOf(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .filter((file) => statSync(join(folder, file)).isFile())
    .map((file) => `/${file.split("\\").join("/")}`)
    .sort();
}

/** A copy of `build` in a new folder under `parent`, changed by `change`. */
export function changedCopy(build: string, parent: string, change: (folder: string) => void): string {
  const folder = join(parent, `build-${Math.random().toString(36).slice(2)}`);
  cpSync(build, folder, { recursive: true });
  change(folder);
  return folder;
}

/** A change for changedCopy: two files the host has never had, for an upload that fails between them. */
export function twoNewFiles(folder: string): void {
  writeFileSync(join(folder, "changed.txt"), "a new file\n");
  writeFileSync(join(folder, "also-changed.txt"), "another\n");
}
