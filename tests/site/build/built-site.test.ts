// The production build as `npm start` serves it: the headers of public/_headers on every
// answer, each page's own Content-Security-Policy, and the calendar file, in the tests' own build
// (tests/support/build.setup.ts).
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStaticHost } from "../../../tools/static-host/static-host.ts";
import { escapeText, utcDateTime } from "../../../src/lib/calendar";
import { elements, readPage, tags } from "./build-graph.ts";
import { content } from "../../support/content.ts";
import { useTestEnvironment } from "../../test-environment.ts";

const DIST = useTestEnvironment().dist;
const PAGES = ["index.html", "404.html"];

let server: Server;
let base: string;

beforeAll(async () => {
  const host = createStaticHost({ root: DIST });
  server = createServer((req, res) => void host(req, res));
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((closed) => server.close(closed)));

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/** A page's <meta> Content-Security-Policy, as directive → sources. */
function metaPolicy(page: string): Map<string, string[]> {
  const meta = tags(readPage(page), "meta").filter(
    (attrs) => attrs.get("http-equiv")?.toLowerCase() === "content-security-policy",
  );
  expect(meta, `<meta> CSPs in ${page}`).toHaveLength(1);
  return new Map(
    meta[0]!
      .get("content")!
      .split(";")
      .map((directive) => directive.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name!, sources]),
  );
}

describe("every answer carries the security headers", () => {
  const asset = `/_astro/${readdirSync(join(DIST, "_astro"))[0]}`;

  it.each(["/", "/no/such/page", "/launch.ics", asset])("%s", async (path) => {
    const { headers } = await fetch(base + path);
    expect(headers.get("x-content-type-options")).toBe("nosniff");
    expect(headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
    // Framing refused twice over: the CSP directive, and the header older browsers know.
    expect(headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(headers.get("x-frame-options")).toBe("DENY");
    expect(headers.get("cross-origin-opener-policy")).toBe("same-origin");
    // Every feature it names is denied to everyone; the page uses none of these.
    const features = headers.get("permissions-policy")!.split(/,\s*/);
    expect(features).toEqual(
      expect.arrayContaining(["camera=()", "microphone=()", "geolocation=()", "payment=()"]),
    );
    expect(features.filter((feature) => !feature.endsWith("=()"))).toEqual([]);
  });
});

describe.each(PAGES)("the Content-Security-Policy of %s", (page) => {
  const policy = metaPolicy(page);
  const html = readPage(page);

  it("allows scripts and styles from this site and by hash only", () => {
    for (const directive of ["script-src", "style-src"]) {
      const loose = policy
        .get(directive)!
        .filter((source) => source !== "'self'" && !/^'sha256-/.test(source));
      expect(loose, `${directive} beyond 'self' and hashes`).toEqual([]);
    }
  });

  it("holds the hash of every inline script and style the page has", () => {
    const scripts = elements(html, "script").filter(({ attrs }) => !attrs.has("src"));
    for (const { body } of scripts) expect(policy.get("script-src")).toContain(sha256(body));
    for (const { body } of elements(html, "style")) expect(policy.get("style-src")).toContain(sha256(body));
  });

  it("connects to this site and one origin, the Supabase project's", () => {
    const [self, ...others] = policy.get("connect-src")!;
    expect(self).toBe("'self'");
    expect(others).toHaveLength(1);
    // An origin: a scheme and a host, no path, no wildcard.
    expect(others[0]).toMatch(/^https?:\/\/[^/*]+$/);
  });

  it("allows nothing else, and no form submission at all", () => {
    expect(
      Object.fromEntries([...policy].filter(([name]) => !/^(script|style|connect)-src$/.test(name))),
    ).toEqual({
      "default-src": ["'none'"],
      "img-src": ["'self'"],
      "base-uri": ["'none'"],
      "form-action": ["'none'"],
    });
  });
});

it("the CSP allows the stylesheet the built sonner injects", () => {
  // sonner passes its stylesheet, as one string literal, to a <style> element it creates.
  const found = readdirSync(join(DIST, "_astro"))
    .filter((file) => file.endsWith(".js"))
    .flatMap((file) => [
      ...readFileSync(join(DIST, "_astro", file), "utf8").matchAll(
        /([`"'])(\[data-sonner-toaster\][\s\S]*?)(?<!\\)\1/g,
      ),
    ]);
  expect(found, "sonner's stylesheet in the build").toHaveLength(1);
  const css = found[0]![2]!;
  expect(css, "an escape in the literal would make its text differ from its source").not.toContain("\\");
  expect(metaPolicy("index.html").get("style-src")).toContain(sha256(css));
});

describe("/launch.ics", () => {
  it("is served as a calendar, valid as RFC 5545 wants it", async () => {
    const response = await fetch(`${base}/launch.ics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/calendar; charset=utf-8");
    const text = await response.text();

    // CRLF line endings only, and no line longer than 75 octets.
    expect(text.endsWith("\r\n")).toBe(true);
    expect(text.replaceAll("\r\n", "")).not.toMatch(/[\r\n]/);
    for (const line of text.split("\r\n")) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);

    const lines = text.replaceAll("\r\n ", "").split("\r\n");
    const home = tags(readPage("index.html"), "link")
      .find((attrs) => attrs.get("rel") === "canonical")!
      .get("href")!;
    expect(lines.slice(0, 3)).toEqual([
      "BEGIN:VCALENDAR",
      "VERSION:2.0",
      expect.stringMatching(/^PRODID:.+/),
    ]);
    expect(lines.filter((line) => line === "BEGIN:VEVENT")).toHaveLength(1);
    expect(lines).toEqual(
      expect.arrayContaining([
        `UID:launch@${new URL(home).hostname}`,
        expect.stringMatching(/^DTSTAMP:\d{8}T\d{6}Z$/),
        `DTSTART:${utcDateTime(content.launch.at)}`,
        `SUMMARY:${escapeText(content.calendar.title)}`,
        expect.stringMatching(new RegExp(`^DESCRIPTION:.+${home.replaceAll(".", "\\.")}$`)),
        `URL:${home}`,
      ]),
    );
    expect(lines.slice(-3)).toEqual(["END:VEVENT", "END:VCALENDAR", ""]);
  });
});
