// Every path the repository's documents name is there: each Markdown file's links and the code
// spans that hold a path, and the paths that comments in the code name. Only what lives outside
// the repository by design may be missing: what git ignores (`.env`, `dist/`), `vercel.json` on
// the host, `seed.sql` in Supabase's layout.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { posix } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  lineRange,
  locate,
  namedInComments,
  namedInMarkdown,
  type CommentStyle,
  type Named,
  type Repository,
} from "./named-paths.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

const git = (args: string[], input?: string) =>
  spawnSync("git", args, { cwd: root, encoding: "utf8", input, maxBuffer: 64 * 1024 * 1024 });

/** The repository's files, committed or not yet, without what git ignores. */
const files = git(["ls-files", "--cached", "--others", "--exclude-standard"])
  .stdout.split("\n")
  .filter((file) => file !== "" && existsSync(posix.join(root, file)));

/** Every path the repository's history holds, from its first commit. */
const everFiles = git(["log", "--format=", "--name-only"]).stdout.split("\n").filter(Boolean);

const repository: Repository = {
  exists: (path) => existsSync(posix.join(root, path)),
  // Exit status 0: ignored; 1: not. --no-index: whether a path would be ignored, even if tracked.
  ignored: (path) => git(["check-ignore", "--quiet", "--no-index", path]).status === 0,
  fileNames: new Set(files.map((file) => posix.basename(file))),
  everFileNames: new Set([...files, ...everFiles].map((file) => posix.basename(file))),
  everTopFolders: new Set(
    [...files, ...everFiles].flatMap((file) => (file.includes("/") ? [file.split("/")[0]!] : [])),
  ),
};

/** How each kind of code file writes its comments. */
const COMMENT_STYLES: [RegExp, CommentStyle][] = [
  [/\.(ts|tsx|mjs|js|astro|css)$/, "slashes"],
  [/\.sql$/, "dashes"],
  [/\.(toml|conf|yaml)$|^\.ci\/run$/, "hash"],
];

const styleOf = (file: string) => COMMENT_STYLES.find(([pattern]) => pattern.test(file))?.[1];

const read = (file: string) => readFileSync(posix.join(root, file), "utf8");

/** `file:line path` for each name in `file` that is not there. */
function missingIn(file: string, named: Named[], comment = false): string[] {
  return named
    .filter((name) => locate(name, file, repository, comment) === null)
    .map(({ line, path }) => `${file}:${line} ${path}`);
}

describe("the files the checks read", () => {
  it("are the repository's own", () => {
    expect(files).toContain("README.md");
    expect(files).toContain("tests/docs/paths.test.ts");
    expect(files.some((file) => file.startsWith("node_modules/"))).toBe(false);
  });
});

describe("every path a document names", () => {
  const documents = files.filter((file) => file.endsWith(".md"));

  it.each(documents)("%s: exists", (file) => {
    const missing = missingIn(file, namedInMarkdown(read(file)));
    expect(missing, `missing:\n${missing.join("\n")}\n`).toEqual([]);
  });

  it.each(documents)("%s: links to lines that its target has", (file) => {
    const outside = namedInMarkdown(read(file)).flatMap((named) => {
      const range = lineRange(named.fragment);
      const found = locate(named, file, repository);
      if (!range || typeof found !== "string" || found === "not a path") return [];
      const lines = read(found).split("\n").length;
      return range[1] > lines
        ? [`${file}:${named.line} ${named.path}#${named.fragment} (${lines} lines)`]
        : [];
    });
    expect(outside).toEqual([]);
  });
});

describe("every repository path a comment names", () => {
  const sources = files.filter((file) => styleOf(file) !== undefined);

  it.each(sources)("%s", (file) => {
    const missing = missingIn(file, namedInComments(read(file), styleOf(file)!), true);
    expect(missing, `missing:\n${missing.join("\n")}\n`).toEqual([]);
  });
});
