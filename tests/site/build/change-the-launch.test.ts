// An editor's change, as the README's "Change the words or the date" describes it: a copy of the
// project gets a new launch date, headline and badge in its content file, and is built. Nothing
// of the old date may be left anywhere in that build (pages, meta tags, island props,
// launch.ics, the social image's alt text), the new words must show, and the social image must
// be drawn anew. The old build is the tests' own (tests/support/build.setup.ts), of this project.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { extname, join } from "node:path";
import yaml from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageBin } from "../../../tools/processes.ts";
import { escapeText, utcDateTime } from "../../../src/lib/calendar";
import { CONTENT_FILE, content as before, readSiteContent } from "../../support/content.ts";
import { copyProject } from "../../support/project-copy.ts";
import { useTestEnvironment } from "../../test-environment.ts";

const DAY = 24 * 60 * 60 * 1000;

const copy = copyProject("future-awaits-editor-");
const dist = join(copy, "dist");
const oldDist = useTestEnvironment().dist;

/** Whatever the launch is now, one a year, a month and some hours away from it. */
const newLaunch = new Date(Date.parse(before.launch.at) + 400 * DAY + 13.5 * 60 * 60 * 1000);

let after: ReturnType<typeof readSiteContent>;

beforeAll(() => {
  // The editor's change: the launch, the headline and the badge, in the content file alone.
  const file = join(copy, CONTENT_FILE);
  const document = yaml.load(readFileSync(file, "utf8"), { schema: yaml.CORE_SCHEMA }) as {
    launch: string;
    landing: { headline: string; badge: string };
  };
  document.launch = newLaunch.toISOString();
  document.landing.headline = "A Headline an Editor Wrote";
  document.landing.badge = "A Badge an Editor Wrote";
  writeFileSync(file, yaml.dump(document, { schema: yaml.CORE_SCHEMA, lineWidth: -1 }));
  after = readSiteContent(copy);

  // Built as `npm run build` builds, with the tests' settings (SITE_URL and the rest).
  const build = spawnSync(process.execPath, [packageBin("astro"), "build"], {
    cwd: copy,
    env: { ...process.env, NODE_ENV: "production" },
    encoding: "utf8",
  });
  expect(build.status, build.stdout + build.stderr).toBe(0);
}, 180_000);

afterAll(() => rmSync(copy, { recursive: true, force: true }));

/** Every text file of a build (pages, calendar, scripts, styles), path → text. */
function textFiles(root: string): Map<string, string> {
  const binary = new Set([".png", ".ico", ".woff", ".woff2", ".wasm"]);
  return new Map(
    readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && !binary.has(extname(entry.name)))
      .map((entry) => {
        const path = join(entry.parentPath, entry.name);
        return [path.slice(root.length + 1), readFileSync(path, "utf8")];
      }),
  );
}

/** Each way the build may write a date: the year, the ISO instant and day, the UTC line, iCalendar's. */
function traces(launch: typeof before.launch): string[] {
  return [launch.year, launch.at, launch.at.slice(0, 10), launch.utc, utcDateTime(launch.at)];
}

describe("after the launch date, the headline and the badge change", () => {
  it("no file of the build holds the old date", () => {
    const files = textFiles(dist);
    expect([...files.keys()]).toEqual(expect.arrayContaining(["index.html", "404.html", "launch.ics"]));
    const found = [...files].flatMap(([path, text]) =>
      traces(before.launch)
        .filter((trace) => text.includes(trace))
        .map((trace) => `${path}: ${trace}`),
    );
    expect(found).toEqual([]);
  });

  it("the landing page shows the new date, headline and badge", () => {
    const page = readFileSync(join(dist, "index.html"), "utf8");
    for (const trace of traces(after.launch).slice(0, 4)) expect(page).toContain(trace);
    expect(elementText(page, "h1")).toBe(after.landing.headline);
    // The badge is the page's first paragraph.
    expect(elementText(page, "p")).toBe(after.landing.badge);
    // The meta description and the social image's alt text say the new year.
    expect(page).toContain(`<meta name="description" content="${after.site.description}"`);
    expect(page).toContain(`<meta property="og:image:alt" content="${after.site.socialImage.alt}"`);
    expect(after.site.description).toContain(after.launch.year);
  });

  it("the not-found page links back to the new year", () => {
    const page = readFileSync(join(dist, "404.html"), "utf8");
    expect(after.notFound.returnLink).toContain(after.launch.year);
    expect(page).toContain(after.notFound.returnLink);
  });

  it("the calendar event starts at the new launch", () => {
    const calendar = readFileSync(join(dist, "launch.ics"), "utf8");
    expect(calendar).toContain(`\r\nDTSTART:${utcDateTime(newLaunch.toISOString())}\r\n`);
    expect(calendar).toContain(`\r\nSUMMARY:${escapeText(after.calendar.title)}\r\n`);
  });

  it("the social image is drawn anew, 1200 × 630", () => {
    const image = readFileSync(join(dist, "og.png"));
    expect(pngSize(image)).toEqual({ width: 1200, height: 630 });
    expect(image.equals(readFileSync(join(oldDist, "og.png"))), "og.png is the old one").toBe(false);
  });
});

/** The text of the first `tag` element in `html`, its markup and spacing stripped. */
function elementText(html: string, tag: string): string | undefined {
  const body = new RegExp(`<${tag}\\b[^>]*>([\\s\\S]*?)</${tag}>`).exec(html)?.[1];
  return body
    ?.replace(/<[^>]*>/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** A PNG's width and height, from its header (IHDR, the first chunk). */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(1, 4).toString("latin1"), "a PNG signature").toBe("PNG");
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}
