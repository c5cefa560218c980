// The `_headers` file, as Netlify and Cloudflare Pages read it and the static host applies it.
import { describe, expect, it } from "vitest";
import { headersFor, parseHeadersFile } from "../../tools/static-host/headers-file.ts";

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
/*.txt
  X-Robots-Tag: noindex
  X-Robots-Tag: nosnippet
/feed.xml
  Cache-Control: max-age=60
/feed.xml
  Cache-Control: max-age=3600
`;

describe("headersFor", () => {
  const rules = parseHeadersFile(FILE);

  it.each([
    // `/*` matches every path, the root too.
    ["/", { "x-frame-options": "DENY", link: "</a.css>; rel=preload" }],
    // Rules add up; a splat matches across slashes.
    [
      "/_astro/chunks/island.js",
      {
        "x-frame-options": "DENY",
        link: "</a.css>; rel=preload",
        "cache-control": "public, max-age=31536000, immutable",
      },
    ],
    // A placeholder matches one segment...
    [
      "/blog/hello/index.html",
      { "x-frame-options": "DENY", link: "</a.css>; rel=preload", "x-robots-tag": "noindex" },
    ],
    // ...and not two.
    ["/blog/a/b/index.html", { "x-frame-options": "DENY", link: "</a.css>; rel=preload" }],
    // A header one rule names twice is sent once, with both values.
    [
      "/robots.txt",
      { "x-frame-options": "DENY", link: "</a.css>; rel=preload", "x-robots-tag": "noindex, nosnippet" },
    ],
    // A dot in a pattern is a dot, not any character.
    ["/launchXics", { "x-frame-options": "DENY", link: "</a.css>; rel=preload" }],
  ])("%s", (path, expected) => {
    expect(headersFor(rules, path)).toEqual(expected);
  });

  it.each([
    // Two matching rules name one header: Cloudflare Pages would join the values, Netlify keep one.
    ["/launch.ics", /Link for \/launch\.ics comes from two rules, \/\* and \/\*\.ics/],
    // A rule written twice for one path: Netlify keeps the later one's header.
    ["/feed.xml", /Cache-Control for \/feed\.xml comes from two rules/],
  ])("refuses what the hosts read differently: %s", (path, message) => {
    expect(() => headersFor(rules, path)).toThrow(message);
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
