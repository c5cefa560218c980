// This repository as the documents' checks see it: its files (committed or not yet, without what
// git ignores), and what its history says it once had.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { posix } from "node:path";
import { fileURLToPath } from "node:url";
import type { Repository } from "./named-paths.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

const git = (args: string[]) =>
  spawnSync("git", args, { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });

/** Its files, relative to the root. */
export const files = git(["ls-files", "--cached", "--others", "--exclude-standard"])
  .stdout.split("\n")
  .filter((file) => file !== "" && existsSync(posix.join(root, file)));

/** Every path its history holds (as far as this clone's history goes). */
const everFiles = git(["log", "--format=", "--name-only"]).stdout.split("\n").filter(Boolean);

export const repository: Repository = {
  exists: (path) => existsSync(posix.join(root, path)),
  // Exit status 0: ignored; 1: not. --no-index: whether a path would be ignored, even if tracked.
  ignored: (path) => git(["check-ignore", "--quiet", "--no-index", path]).status === 0,
  fileNames: new Set(files.map((file) => posix.basename(file))),
  everFileNames: new Set([...files, ...everFiles].map((file) => posix.basename(file))),
  everTopFolders: new Set(
    [...files, ...everFiles].flatMap((file) => (file.includes("/") ? [file.split("/")[0]!] : [])),
  ),
};

/** A file's text, by its path from the root. */
export const read = (file: string) => readFileSync(posix.join(root, file), "utf8");

/** A file's bytes: a text file has no NUL among them. */
export const readBytes = (file: string) => readFileSync(posix.join(root, file));
