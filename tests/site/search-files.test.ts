// robots.txt and the sitemap, and whether a build has one (only with SITE_URL set).
import { describe, expect, it } from "vitest";
import { publicSite, robotsTxt, sitemapUrl, sitemapXml } from "../../src/lib/search-files";

const SITE = new URL("https://example.com/");

describe("publicSite", () => {
  it.each([
    ["https://example.com", SITE],
    // A local build names localhost: no search engine should be told of it.
    [undefined, null],
  ])("SITE_URL %s → %s", (setting, expected) => {
    expect(publicSite(SITE, setting)).toEqual(expected);
  });
});

describe("robotsTxt", () => {
  it.each([
    [sitemapUrl(SITE), "User-agent: *\nAllow: /\n\nSitemap: https://example.com/sitemap.xml\n"],
    [null, "User-agent: *\nAllow: /\n"],
  ])("sitemap %s", (sitemap, expected) => {
    expect(robotsTxt(sitemap)).toBe(expected);
  });
});

describe("sitemapXml", () => {
  it("lists each page's address, escaped", () => {
    expect(sitemapXml([SITE, new URL("https://example.com/a?b=1&c=2")])).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
        "  <url><loc>https://example.com/</loc></url>",
        "  <url><loc>https://example.com/a?b=1&amp;c=2</loc></url>",
        "</urlset>",
        "",
      ].join("\n"),
    );
  });
});
