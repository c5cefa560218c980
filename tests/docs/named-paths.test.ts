// What counts as a named repository path, and when it is missing, on a repository made up here:
// the check must catch a path that is gone, and leave alone words that only look like paths.
import { describe, expect, it } from "vitest";
import {
  headingAnchors,
  lineRange,
  locate,
  namedInComments,
  namedInMarkdown,
  type Repository,
} from "./named-paths.ts";

/** A repository of a few files, which once had two more (`had`), and ignores a folder of drafts. */
const files = [
  "README.md",
  "docs/product.md",
  "tools/local-supabase/README.md",
  "tools/local-supabase/index.ts",
];
const had = [...files, "server/sign-ups/cli.ts", "tests/backend/helpers.ts"];
const repository: Repository = {
  exists: (path) => {
    const name = path.replace(/\/$/, "");
    return files.some((file) => file === name || file.startsWith(`${name}/`));
  },
  ignored: (path) => path === ".env" || path.startsWith("docs/drafts/"),
  fileNames: new Set(files.map((file) => file.split("/").at(-1)!)),
  everFileNames: new Set(had.map((file) => file.split("/").at(-1)!)),
  everTopFolders: new Set(had.flatMap((file) => (file.includes("/") ? [file.split("/")[0]!] : []))),
};

/** Each name that is a path, with where it was found (null: missing). */
const inMarkdown = (markdown: string, file = "README.md") =>
  namedInMarkdown(markdown)
    .map((named) => [named.path, locate(named, file, repository)])
    .filter(([, found]) => found !== "not a path");

describe.each([
  // A link, from the document's folder.
  { markdown: "[the product](docs/product.md)", found: [["docs/product.md", "docs/product.md"]] },
  // A link to a file that is gone: missing, whatever it looks like.
  { markdown: "[gone](docs/old.md)", found: [["docs/old.md", null]] },
  // A link's fragment is no part of the path.
  { markdown: "[lines](docs/product.md#L3-L5)", found: [["docs/product.md", "docs/product.md"]] },
  // A web address is not a path; an anchor alone is the document itself.
  { markdown: "[web](https://example.com/a.md) [here](#deploy)", found: [["", "README.md"]] },
  // A code span of a path from the root.
  {
    markdown: "see `tools/local-supabase/index.ts`",
    found: [["tools/local-supabase/index.ts", "tools/local-supabase/index.ts"]],
  },
  // A folder that is gone, though the repository had it.
  { markdown: "the command (`server/sign-ups/`)", found: [["server/sign-ups/", null]] },
  // A bare name the repository had, and has no more.
  { markdown: "`helpers.ts` holds them", found: [["helpers.ts", null]] },
  // A bare name it has, in another folder.
  { markdown: "`index.ts` is the gateway", found: [["index.ts", "index.ts"]] },
  // Words that only look like paths: a media type, a package's own file, a site's URL path, a
  // file the user keeps (git ignores it).
  { markdown: "`text/calendar`, `binary.js`, `/launch.ics`, `example.com`, `.env`", found: [] },
  // What git ignores, and what lives elsewhere by design.
  {
    markdown: "[the host's](vercel.json), [the seed](tools/seed.sql), `docs/drafts/`",
    found: [
      ["vercel.json", "vercel.json"],
      ["tools/seed.sql", "tools/seed.sql"],
      ["docs/drafts/", "docs/drafts/"],
    ],
  },
  // A fenced block is not read.
  { markdown: "```sh\ncat server/sign-ups/cli.ts\n```", found: [] },
])("$markdown", ({ markdown, found }) => {
  it("is found where it is, or missing", () => {
    expect(inMarkdown(markdown)).toEqual(found);
  });
});

describe("a path beside the document", () => {
  it("is looked up from the document's folder", () => {
    expect(inMarkdown("`index.ts` and `../../docs/product.md`", "tools/local-supabase/README.md")).toEqual([
      ["index.ts", "tools/local-supabase/index.ts"],
      ["../../docs/product.md", "docs/product.md"],
    ]);
  });
});

describe.each([
  // A path from the root in a line comment.
  {
    source: "// see tools/local-supabase/index.ts.",
    found: [["tools/local-supabase/index.ts", "tools/local-supabase/index.ts"]],
  },
  // A file that is gone, in a block comment.
  { source: " * as tests/backend/helpers.ts does", found: [["tests/backend/helpers.ts", null]] },
  // A GitHub repository and a URL's path are not this repository's paths.
  { source: "// as supabase/splinter's lints, https://github.com/docs/product", found: [] },
  // Code outside comments is not read.
  { source: 'import x from "docs/old.ts";', found: [] },
])("$source", ({ source, found }) => {
  it("is found where it is, or missing", () => {
    const paths = namedInComments(source, "slashes")
      .map((name) => [name.path, locate(name, "tools/x.ts", repository, true)])
      .filter(([, where]) => where !== "not a path");
    expect(paths).toEqual(found);
  });
});

describe.each([
  // A host's file, as public/_headers writes its comments.
  {
    style: "hash",
    source: "# `npm start` applies it too (server/sign-ups/cli.ts)\n/*\n  X-Frame-Options: DENY",
    found: [["server/sign-ups/cli.ts", null]],
  },
  // An image's markup comment, and not its attributes.
  {
    style: "markup",
    source: '<svg xmlns="http://www.w3.org/2000/svg"><!-- drawn as docs/product.md says --></svg>',
    found: [["docs/product.md", "docs/product.md"]],
  },
  // JSON has no comments: every line is read.
  {
    style: "none",
    source: '{ "scripts": { "dev": "node tools/local-supabase/index.ts" } }',
    found: [["tools/local-supabase/index.ts", "tools/local-supabase/index.ts"]],
  },
] as const)("a file whose comments are $style", ({ style, source, found }) => {
  it("is read as its kind writes comments", () => {
    const paths = namedInComments(source, style)
      .map((name) => [name.path, locate(name, "public/_headers", repository, true)])
      .filter(([, where]) => where !== "not a path");
    expect(paths).toEqual(found);
  });
});

describe("a link's lines", () => {
  it.each([
    ["L12-L20", [12, 20]],
    ["L7", [7, 7]],
    ["deploy", null],
    [null, null],
  ] as const)("#%s names lines %j", (fragment, range) => {
    expect(lineRange(fragment)).toEqual(range);
  });
});

describe("a heading's anchor", () => {
  it.each([
    // Lowercased, spaces to hyphens.
    ["## Sign-up limits", "sign-up-limits"],
    // Punctuation and code marks dropped.
    ["## What `export` gives", "what-export-gives"],
    ["### The form's states", "the-forms-states"],
    // A heading inside a fenced block is none.
    ["```md\n## Not a heading\n```", null],
  ])("%j: %s", (markdown, anchor) => {
    expect([...headingAnchors(markdown)]).toEqual(anchor === null ? [] : [anchor]);
  });

  it("of a repeated heading is numbered, as GitHub numbers it", () => {
    expect([...headingAnchors("## Tests\n## Tests")]).toEqual(["tests", "tests-1"]);
  });
});
