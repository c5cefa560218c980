// The `_headers` file, as Netlify and Cloudflare Pages read it and the static host applies it.
import { describe, expect, it } from "vitest";
import { headersFor, parseHeadersFile } from "../../server/headers-file.ts";

const FILE = `
# Comments and blank lines are ignored.
/*
  X-Frame-Options: DENY
  Link: </a.css>; rel=preload

/_astro/*
  Cache-Control: public, max-age=31536000, immutable
/blog/:slug/index.html
  X-Robots-Tag: noindex
/*.ics
  Link: </b.css>; rel=preload
`;

describe("headersFor", () => {
  const rules = parseHeadersFile(FILE);

  it.each([
    // `/*` matches every path, the root too.
    ["/", { "X-Frame-Options": "DENY", Link: "</a.css>; rel=preload" }],
    // Rules add up; a splat matches across slashes.
    [
      "/_astro/chunks/island.js",
      {
        "X-Frame-Options": "DENY",
        Link: "</a.css>; rel=preload",
        "Cache-Control": "public, max-age=31536000, immutable",
      },
    ],
    // A placeholder matches one segment...
    [
      "/blog/hello/index.html",
      { "X-Frame-Options": "DENY", Link: "</a.css>; rel=preload", "X-Robots-Tag": "noindex" },
    ],
    // ...and not two.
    ["/blog/a/b/index.html", { "X-Frame-Options": "DENY", Link: "</a.css>; rel=preload" }],
    // A header named by two matching rules gets both values.
    ["/launch.ics", { "X-Frame-Options": "DENY", Link: "</a.css>; rel=preload, </b.css>; rel=preload" }],
    // A dot in a pattern is a dot, not any character.
    ["/launchXics", { "X-Frame-Options": "DENY", Link: "</a.css>; rel=preload" }],
  ])("%s", (path, expected) => {
    expect(headersFor(rules, path)).toEqual(expected);
  });
});

describe("parseHeadersFile", () => {
  it.each([
    // A header before any path.
    ["  X-Frame-Options: DENY\n"],
    // An indented line that is not a header.
    ["/*\n  not a header\n"],
  ])("refuses %j", (text) => {
    expect(() => parseHeadersFile(text)).toThrow(SyntaxError);
  });
});
