// Every path the repository's documents name is there: each Markdown file's links (with the
// lines or heading they point at) and the code spans that hold a path, and the paths that the
// comments of every other text file name (code, configuration, public/'s files for the host). Only what lives outside the repository by design may be missing:
// what git ignores (`.env`, `dist/`), `vercel.json` on the host, `seed.sql` in Supabase's layout.
import { describe, expect, it } from "vitest";
import {
  headingAnchors,
  lineRange,
  locate,
  namedInComments,
  namedInMarkdown,
  type CommentStyle,
  type Named,
} from "./named-paths.ts";
import { files, read, readBytes, repository } from "./repository.ts";

/** How each kind of text file writes its comments, by its path. */
const COMMENT_STYLES: [RegExp, CommentStyle][] = [
  [/\.(ts|tsx|mjs|js|astro|css)$/, "slashes"],
  [/\.sql$/, "dashes"],
  [/\.(toml|conf|ya?ml)$|^\.ci\/run$|(^|\/)(_headers|\.gitignore|\.prettierignore|\.env\.example)$/, "hash"],
  [/\.svg$/, "markup"],
  [/\.json$/, "none"],
];

/** Text files that name no path of this repository: npm writes the lock, whose paths are its packages' own. */
const NOT_READ = new Set(["package-lock.json"]);

const styleOf = (file: string) =>
  NOT_READ.has(file) ? undefined : COMMENT_STYLES.find(([pattern]) => pattern.test(file))?.[1];

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

  it("are every text file it has: each a document, or of a kind whose comments are known", () => {
    const unread = files.filter(
      (file) =>
        !file.endsWith(".md") &&
        !NOT_READ.has(file) &&
        styleOf(file) === undefined &&
        !readBytes(file).includes(0),
    );
    expect(unread, "text files of no known comment style (COMMENT_STYLES)").toEqual([]);
  });
});

describe("every path a document names", () => {
  const documents = files.filter((file) => file.endsWith(".md"));

  it.each(documents)("%s: exists", (file) => {
    const missing = missingIn(file, namedInMarkdown(read(file)));
    expect(missing, `missing:\n${missing.join("\n")}\n`).toEqual([]);
  });

  it.each(documents)("%s: links to lines and headings that its target has", (file) => {
    const broken = namedInMarkdown(read(file)).flatMap((named) => {
      const found = locate(named, file, repository);
      if (named.fragment === null || found === null || found === "not a path" || !repository.exists(found))
        return [];
      const where = `${file}:${named.line} ${named.path}#${named.fragment}`;
      const range = lineRange(named.fragment);
      if (range) {
        const lines = read(found).split("\n").length;
        return range[1] > lines ? [`${where} (${lines} lines)`] : [];
      }
      return found.endsWith(".md") && !headingAnchors(read(found)).has(named.fragment) ? [where] : [];
    });
    expect(broken).toEqual([]);
  });
});

describe("every repository path a comment names, in every file that is not a document", () => {
  // But a migration's: it is never edited once shipped (supabase/README.md), so its comments name
  // the files as they were then, and a schema file may have been renamed since.
  const sources = files.filter(
    (file) => styleOf(file) !== undefined && !file.startsWith("supabase/migrations/"),
  );

  it.each(sources)("%s", (file) => {
    const missing = missingIn(file, namedInComments(read(file), styleOf(file)!), true);
    expect(missing, `missing:\n${missing.join("\n")}\n`).toEqual([]);
  });
});
