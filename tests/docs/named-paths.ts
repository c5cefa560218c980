// The repository paths a file names: in Markdown, its links and the code spans that hold one
// path; in code, the paths its comments name. Pure: the repository itself is handed in, so the
// rules can be tested on a repository made up for the test.
import { posix } from "node:path";

/** A name that may be a repository path, where it stands in its file. */
export interface Named {
  /** As written, without a link's `#fragment`; empty for a link within its own file. */
  path: string;
  /** A link's `#fragment` (`L12-L20` for lines of a file), or null. */
  fragment: string | null;
  line: number;
  /** A link's target is a path whatever it looks like; a code span or comment may be other text. */
  link: boolean;
}

/** One path-like word: segments of name characters, optionally from ./ or ../, maybe with a final slash. */
const PATH_WORD = /^(?:\.{1,2}\/)*[\w.@[\]-]+(?:\/[\w.@[\]-]+)*\/?$/;
/** Where a link's target is another scheme (https:, mailto:) rather than a path. */
const SCHEME = /^[a-z][a-z\d+.-]*:/i;
/** A path-like word in running text: at least one slash, not in the middle of a URL or package. */
const PATH_IN_TEXT = /(?<![\w.@/:-])(?:\.{1,2}\/)*[\w@[\]-][\w.@[\]-]*(?:\/[\w.@[\]-]+)+\/?/g;

/** A Markdown file's relative links, and its code spans that are one path-like word, outside fenced blocks. */
export function namedInMarkdown(markdown: string): Named[] {
  const named: Named[] = [];
  let fence: string | null = null;
  markdown.split("\n").forEach((text, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) fence = fence === null ? marker : null;
    if (marker || fence !== null) return;
    const line = index + 1;
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (SCHEME.test(target!)) continue;
      const [path, fragment = null] = target!.split("#") as [string, string?];
      named.push({ path: decodeURI(path), fragment, line, link: true });
    }
    for (const [, span] of text.matchAll(/`([^`]+)`/g)) {
      const word = span!.trim();
      if (PATH_WORD.test(word) && /[/.]/.test(word))
        named.push({ path: word, fragment: null, line, link: false });
    }
  });
  return named;
}

/**
 * How comments start, by file extension (a `#` or `//` must start the line or follow a space);
 * `none` for a format without comments (JSON), whose every line is read.
 */
const COMMENT = {
  slashes: /(?:^|\s)\/\/(.*)$|^\s*(?:\/\*+|\*(?!\/))(.*)$/,
  dashes: /(?:^|\s)--(.*)$/,
  hash: /(?:^|\s)#(.*)$/,
  markup: /<!--(.*?)(?:-->|$)/,
  none: /^(.*)$/,
};
export type CommentStyle = keyof typeof COMMENT;

/** The path-like words, each with at least one slash, of a file's comments. */
export function namedInComments(source: string, style: CommentStyle): Named[] {
  return source.split("\n").flatMap((text, index) => {
    const match = COMMENT[style].exec(text);
    const comment = match?.[1] ?? match?.[2];
    if (comment === undefined) return [];
    return [...comment.matchAll(PATH_IN_TEXT)].map(([word]) => ({
      path: word.replace(/[.]+$/, ""),
      fragment: null,
      line: index + 1,
      link: false,
    }));
  });
}

/** What the checks need to know of the repository, paths relative to its root. */
export interface Repository {
  /** Whether a file or folder is there now (a trailing slash allowed). */
  exists(path: string): boolean;
  /** Whether git ignores the path: made by a command (`dist/`) or kept by the user (`.env`), by design not here. */
  ignored(path: string): boolean;
  /** The names of the files it has now, for a bare `database.ts` named in another folder's README. */
  fileNames: ReadonlySet<string>;
  /** The names of the files it ever had: a bare name is a file name only if one of its files had it. */
  everFileNames: ReadonlySet<string>;
  /** Its top-level folders, now and in its history (`src`, `tests`, a removed `server`). */
  everTopFolders: ReadonlySet<string>;
}

/** Files a document may name that live elsewhere by design: on the static host, in Supabase's layout. */
const ELSEWHERE = new Set(["vercel.json", "seed.sql"]);

/** Where a name was found: the path from the root, or null; "not a path" for words that only look alike. */
export type Found = string | null | "not a path";

/**
 * Where `named`, in the file at `file` (relative to the root), is. A link always names a path,
 * from the file's folder, and so does a document's `./` or `../` word (a comment's may be an
 * example). Other words name one when they start with a top-level folder the
 * repository has or had, or an entry beside the file (a comment's word also needs a file
 * extension, a final slash or three segments: `supabase/splinter` is a repository on GitHub), or
 * are the bare name of a file it has or had. They are looked up from the root and from the
 * file's folder, a bare name anywhere. A path git ignores, or one of ELSEWHERE, counts as found.
 */
export function locate(named: Named, file: string, repository: Repository, comment = false): Found {
  const folder = posix.dirname(file);
  const { path, link } = named;
  if (link && path === "") return file;
  const relative = /^\.{1,2}\//.test(path);
  const segments = path
    .replace(/^(\.{1,2}\/)+/, "")
    .split("/")
    .filter(Boolean);
  const bare = !path.includes("/");
  const first = segments[0]!;
  const specific = !comment || path.endsWith("/") || /\.\w+$/.test(path) || segments.length >= 3;
  const looksLikePath =
    link ||
    (bare
      ? repository.everFileNames.has(path)
      : relative
        ? !comment
        : specific && (repository.everTopFolders.has(first) || repository.exists(posix.join(folder, first))));
  if (!looksLikePath) return "not a path";
  const candidates = [
    ...(link && path.startsWith("/") ? [path.slice(1)] : [posix.join(folder, path)]),
    ...(link || relative ? [] : [path]),
  ];
  const found = candidates.find((candidate) => repository.exists(candidate) || repository.ignored(candidate));
  if (found !== undefined) return posix.normalize(found);
  if (ELSEWHERE.has(posix.basename(path))) return path;
  return bare && !link && repository.fileNames.has(path) ? path : null;
}

/** The anchors a Markdown file's headings get, as GitHub makes them (`## What \`export\` gives`: `what-export-gives`). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fence: string | null = null;
  for (const text of markdown.split("\n")) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) fence = fence === null ? marker : null;
    const heading = marker || fence !== null ? null : /^#{1,6}\s+(.*?)\s*#*$/.exec(text)?.[1];
    if (heading === null || heading === undefined) continue;
    const anchor = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    let unique = anchor;
    for (let n = 1; anchors.has(unique); n++) unique = `${anchor}-${n}`;
    anchors.add(unique);
  }
  return anchors;
}

/** The lines a `#L12-L20` or `#L12` fragment names, or null for any other fragment. */
export function lineRange(fragment: string | null): [number, number] | null {
  const match = /^L(\d+)(?:-L(\d+))?$/.exec(fragment ?? "");
  return match ? [Number(match[1]), Number(match[2] ?? match[1])] : null;
}
