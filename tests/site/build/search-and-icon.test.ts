// What search engines and link previews read from the tests' build (made with SITE_URL set, as a
// build for a real site is), served as `npm start` serves it: robots.txt and the sitemap it names,
// each page's canonical address (none for the not-found page), and /favicon.ico.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStaticHost } from "../../../tools/static-host/static-host.ts";
import { readPage, tags } from "./build-graph.ts";
import { useTestEnvironment } from "../../test-environment.ts";

const { dist, siteUrl } = useTestEnvironment();

let server: Server;
let base: string;

beforeAll(async () => {
  const host = createStaticHost({ root: dist });
  server = createServer((req, res) => void host(req, res));
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((closed) => server.close(closed)));

/** A page's addresses of itself: its canonical link and its og:url. */
function ownAddresses(page: string) {
  const html = readPage(page);
  return {
    canonical: tags(html, "link")
      .filter((attrs) => attrs.get("rel") === "canonical")
      .map((a) => a.get("href")),
    ogUrl: tags(html, "meta")
      .filter((attrs) => attrs.get("property") === "og:url")
      .map((a) => a.get("content")),
    robots: tags(html, "meta")
      .filter((attrs) => attrs.get("name") === "robots")
      .map((a) => a.get("content")),
  };
}

describe("the pages' own addresses", () => {
  it("the landing page is indexed, under the site's address", () => {
    const home = new URL("/", siteUrl).href;
    expect(ownAddresses("index.html")).toEqual({ canonical: [home], ogUrl: [home], robots: [] });
  });

  it("the not-found page is kept out of search and names no address of its own", () => {
    expect(ownAddresses("404.html")).toEqual({ canonical: [], ogUrl: [], robots: ["noindex"] });
  });
});

describe("robots.txt and the sitemap", () => {
  it("robots.txt lets every crawler in and names the sitemap by its absolute address", async () => {
    const response = await fetch(`${base}/robots.txt`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await response.text()).toBe(
      `User-agent: *\nAllow: /\n\nSitemap: ${new URL("/sitemap.xml", siteUrl).href}\n`,
    );
  });

  it("the sitemap lists the one page, at its canonical address", async () => {
    const response = await fetch(`${base}/sitemap.xml`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/xml; charset=utf-8");
    const xml = await response.text();
    expect(xml).toMatch(
      /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<urlset xmlns="http:\/\/www\.sitemaps\.org\/schemas\/sitemap\/0\.9">/,
    );
    expect([...xml.matchAll(/<loc>([^<]*)<\/loc>/g)].map((match) => match[1])).toEqual(
      ownAddresses("index.html").canonical,
    );
  });
});

describe("/favicon.ico", () => {
  it("is an icon of PNG images at 16, 32 and 48 px", async () => {
    const response = await fetch(`${base}/favicon.ico`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/x-icon");
    const bytes = Buffer.from(await response.arrayBuffer());
    // ICONDIR: reserved 0, type 1 (icon), the number of images.
    expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2)]).toEqual([0, 1]);
    const images = Array.from({ length: bytes.readUInt16LE(4) }, (_, index) => {
      const entry = 6 + 16 * index;
      const png = bytes.subarray(
        bytes.readUInt32LE(entry + 12),
        bytes.readUInt32LE(entry + 12) + bytes.readUInt32LE(entry + 8),
      );
      return {
        entry: [bytes[entry], bytes[entry + 1]],
        // The PNG's signature, and the width and height of its IHDR chunk.
        signature: png.subarray(0, 8).toString("hex"),
        ihdr: [png.readUInt32BE(16), png.readUInt32BE(20)],
      };
    });
    expect(images).toEqual(
      [16, 32, 48].map((size) => ({
        entry: [size, size],
        signature: "89504e470d0a1a0a",
        ihdr: [size, size],
      })),
    );
  });
});
