// deploy/README.md's caching lines for the hosts that cannot read _headers (Vercel, S3 + CloudFront)
// say what public/_headers says (deploy/nginx.conf is held to it in a real nginx: nginx.test.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { headersFor, parseHeadersFile } from "../../tools/static-host/headers-file.ts";
import { PROJECT } from "../support/content.ts";

const readme = readFileSync(join(PROJECT, "deploy/README.md"), "utf8");
const rules = parseHeadersFile(readFileSync(join(PROJECT, "public/_headers"), "utf8"));
const ASSET = "/_astro/index.abc123.js";
const immutable = headersFor(rules, ASSET)["cache-control"]!;

describe("deploy/README.md's caching lines", () => {
  it("_headers caches /_astro/* for good, and names no caching for the rest", () => {
    expect(immutable).toMatch(/immutable/);
    expect(headersFor(rules, "/")["cache-control"]).toBeUndefined();
  });

  it("Vercel: the rule for /_astro/, as vercel.json takes it", () => {
    const line = /`(\{ "source": "\/_astro\/\(\.\*\)".*\})`/.exec(readme)?.[1];
    expect(line, "the vercel.json rule in deploy/README.md").toBeDefined();
    const rule = JSON.parse(line!) as { source: string; headers: { key: string; value: string }[] };
    expect(new RegExp(`^${rule.source}$`).test(ASSET)).toBe(true);
    expect(rule.headers).toEqual([{ key: "Cache-Control", value: immutable }]);
  });

  it("S3 + CloudFront: the /_astro/* behaviour adds the same value", () => {
    const cloudFront = readme.slice(
      readme.indexOf("**Amazon S3 + CloudFront**"),
      readme.indexOf("**nginx**"),
    );
    expect(cloudFront).toContain("`/_astro/*`");
    expect(cloudFront.replace(/\s+/g, " ")).toContain(`\`Cache-Control: ${immutable}\``);
  });
});
