// `npm run bench:lighthouse [-- --runs N]` (and the first half of `npm run bench`): how fast the
// production build is, in Lighthouse's default mobile profile (simulated slow 4G and a 4× slower
// CPU), on `/` and on an unknown path.
//
// Absolute figures depend on the machine, so every page is also measured, in the same run, on a
// copy of the build with every script removed: the fastest this very page can be. Our figures are
// read as ratios to that copy, and the targets (TARGETS below) are judged on them. Each measurement gets a fresh
// Chrome with an empty profile, so no run inherits another's cache, and the two builds take turns
// so that a busy moment on the machine hits both alike. It prints figures, never fails on them.
//
// Prints the medians as markdown and writes every sample and median to
// bench/results/lighthouse.json.
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { launch } from "chrome-launcher";
import lighthouse, { type Result } from "lighthouse";
import { astro, exited } from "../tools/processes.ts";
import { CHROMIUM_FLAGS, SYSTEM_CHROMIUM } from "../tools/chromium.ts";
import { filesUnder, median, ms, serve, table } from "./support.ts";

const DIST = resolve("dist");
const RESULTS = "bench/results/lighthouse.json";
const PAGES = ["/", "/no-such-page"];
const BUILDS = { ours: "our build", scriptFree: "no scripts" } as const;
type Build = keyof typeof BUILDS;

// Lighthouse drives a headless Chromium of its own launching.
const CHROME_FLAGS = ["--headless=new", "--disable-gpu", ...CHROMIUM_FLAGS];

/** What one Lighthouse run is boiled down to, with how to read and show each figure. */
const METRICS = [
  { key: "performance", label: "Performance", read: category("performance"), show: String },
  { key: "accessibility", label: "Accessibility", read: category("accessibility"), show: String },
  { key: "bestPractices", label: "Best Practices", read: category("best-practices"), show: String },
  { key: "seo", label: "SEO", read: category("seo"), show: String },
  { key: "fcp", label: "FCP", read: audit("first-contentful-paint"), show: ms },
  { key: "lcp", label: "LCP", read: audit("largest-contentful-paint"), show: ms },
  { key: "tbt", label: "TBT", read: audit("total-blocking-time"), show: ms },
  { key: "cls", label: "CLS", read: audit("cumulative-layout-shift"), show: (n: number) => n.toFixed(4) },
  { key: "jsBytes", label: "JavaScript transferred", read: transferred("script"), show: kib },
  { key: "totalBytes", label: "Total transferred", read: transferred("total"), show: kib },
  { key: "requests", label: "Requests", read: requestCount, show: String },
] as const;
type Metric = (typeof METRICS)[number]["key"];
type Figures = Record<Metric, number>;

interface Target {
  label: string;
  pages: string[];
  /** The figure the verdict is about, shown beside it. */
  metric: Metric;
  holds: (ours: Figures, limit: Figures) => boolean;
}

/** The targets: how close to the script-free copy the build must stay. The scores are for `/` only: the 404 page is noindex and logs an error on purpose. */
const TARGETS: Target[] = [
  ...(["performance", "accessibility", "bestPractices", "seo"] as const).map((metric) => ({
    label: `${label(metric)} = 100`,
    pages: ["/"],
    metric,
    holds: (ours: Figures) => ours[metric] === 100,
  })),
  {
    label: "FCP ≤ 1.05 × no scripts",
    pages: PAGES,
    metric: "fcp",
    holds: (ours, limit) => ours.fcp <= 1.05 * limit.fcp,
  },
  {
    label: "LCP ≤ 1.05 × no scripts",
    pages: PAGES,
    metric: "lcp",
    holds: (ours, limit) => ours.lcp <= 1.05 * limit.lcp,
  },
  { label: "TBT ≤ 20 ms", pages: PAGES, metric: "tbt", holds: (ours) => ours.tbt <= 20 },
  { label: "CLS = 0", pages: PAGES, metric: "cls", holds: (ours) => ours.cls === 0 },
];

function label(metric: Metric): string {
  return METRICS.find(({ key }) => key === metric)!.label;
}

function format(metric: Metric, value: number): string {
  return METRICS.find(({ key }) => key === metric)!.show(value);
}

function category(id: string) {
  return (lhr: Result) => Math.round((lhr.categories[id]?.score ?? 0) * 100);
}

function audit(id: string) {
  return (lhr: Result) => lhr.audits[id]?.numericValue ?? NaN;
}

/** A row of Lighthouse's resource summary (`total`, `script`, …). */
function resourceRow(lhr: Result, type: string): { transferSize: number; requestCount: number } {
  const details = lhr.audits["resource-summary"]?.details;
  const items = details?.type === "table" ? details.items : [];
  const row = items.find((item) => item.resourceType === type);
  return { transferSize: Number(row?.transferSize ?? 0), requestCount: Number(row?.requestCount ?? 0) };
}

function transferred(type: string) {
  return (lhr: Result) => resourceRow(lhr, type).transferSize;
}

function requestCount(lhr: Result) {
  return resourceRow(lhr, "total").requestCount;
}

function kib(n: number) {
  return `${(n / 1024).toFixed(1)} KiB`;
}

/** A private copy of the build, so that a rebuild elsewhere (`npm test`, say) cannot change it mid-bench. */
async function copyOfBuild(): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), "bench-build-"));
  await cp(DIST, copy, { recursive: true });
  return copy;
}

/** Removes every script from a build's HTML, leaving the page's own physical limit. */
async function stripScripts(root: string): Promise<void> {
  for (const file of await filesUnder(root)) {
    if (!file.endsWith(".html")) continue;
    const html = await readFile(join(root, file), "utf8");
    const stripped = html
      .replace(/<script\b[^>]*>[\s\S]*?<\/script>/gi, "")
      .replace(/<link\b[^>]*\brel=["']?modulepreload\b[^>]*>/gi, "");
    await writeFile(join(root, file), stripped);
  }
}

interface Versions {
  lighthouse: string;
  browser: string;
}

/** One Lighthouse run in a fresh Chrome, boiled down to the figures we report. */
async function measure(url: string): Promise<{ figures: Figures; versions: Versions }> {
  const chrome = await launch({ chromePath: SYSTEM_CHROMIUM, chromeFlags: CHROME_FLAGS, logLevel: "silent" });
  try {
    const result = await lighthouse(url, {
      port: chrome.port,
      logLevel: "error",
      // The unknown path answers 404 on purpose; Lighthouse would otherwise refuse to audit it.
      ignoreStatusCode: true,
      // Headless Chromium here never answers the full-page screenshot of the 404 page (Lighthouse
      // gives up after 30 s with a runtime error); the picture is for the HTML report, no figure uses it.
      disableFullPageScreenshot: true,
    });
    if (!result) throw new Error(`Lighthouse returned nothing for ${url}`);
    const { lhr } = result;
    if (lhr.runtimeError) throw new LighthouseRunError(url, lhr.runtimeError);
    const figures = Object.fromEntries(METRICS.map(({ key, read }) => [key, read(lhr)])) as Figures;
    const browser =
      lhr.environment.hostUserAgent.match(/Chrome\/[\d.]+/)?.[0] ?? lhr.environment.hostUserAgent;
    return { figures, versions: { lighthouse: lhr.lighthouseVersion, browser } };
  } finally {
    chrome.kill();
  }
}

class LighthouseRunError extends Error {
  readonly code: string;
  constructor(url: string, { code, message }: { code: string; message: string }) {
    super(`Lighthouse failed on ${url}: ${message}`);
    this.code = code;
  }
}

// Now and then Lighthouse loses the start of its trace and asks to be run again (NO_NAVSTART):
// since the page's Cross-Origin-Opener-Policy, Chromium moves it to a new process as it loads.
const RETRIED = new Set(["NO_NAVSTART"]);
const ATTEMPTS = 3;

async function measureAgainIfAsked(url: string): ReturnType<typeof measure> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await measure(url);
    } catch (error) {
      if (!(error instanceof LighthouseRunError && RETRIED.has(error.code)) || attempt === ATTEMPTS)
        throw error;
      console.log(`  ${error.code} on ${url}: running it again`);
    }
  }
}

// What each run prints as it goes, so a slow or odd run shows at once.
const PROGRESS: Metric[] = ["fcp", "lcp", "tbt", "cls"];

type Samples = Record<string, Record<Build, Figures[]>>;

/** `runs` rounds over every page and both builds, taking turns. */
async function measureAll(
  origins: Record<Build, string>,
  runs: number,
): Promise<{ samples: Samples; versions: Versions }> {
  const samples: Samples = Object.fromEntries(PAGES.map((page) => [page, { ours: [], scriptFree: [] }]));
  let versions: Versions | undefined;
  for (let run = 1; run <= runs; run++) {
    for (const page of PAGES) {
      for (const build of Object.keys(BUILDS) as Build[]) {
        const result = await measureAgainIfAsked(origins[build] + page);
        samples[page]![build].push(result.figures);
        versions = result.versions;
        const timings = PROGRESS.map(
          (metric) => `${label(metric)} ${format(metric, result.figures[metric])}`,
        );
        console.log(
          `run ${run}/${runs}  ${page.padEnd(14)} ${BUILDS[build].padEnd(10)} ${timings.join("  ")}`,
        );
      }
    }
  }
  return { samples, versions: versions! };
}

function medians(runs: Figures[]): Figures {
  return Object.fromEntries(
    METRICS.map(({ key }) => [key, median(runs.map((figures) => figures[key]))]),
  ) as Figures;
}

function ratio(ours: number, limit: number): string {
  return limit === 0 ? (ours === 0 ? "1.00×" : "–") : `${(ours / limit).toFixed(2)}×`;
}

interface PageSummary {
  ours: Figures;
  scriptFree: Figures;
}

function pageTable(page: string, { ours, scriptFree }: PageSummary): string {
  const rows = METRICS.map(({ key, label, show }) => [
    label,
    show(ours[key]),
    show(scriptFree[key]),
    ratio(ours[key], scriptFree[key]),
  ]);
  return `### \`${page}\`\n\n${table(["Median", BUILDS.ours, BUILDS.scriptFree, "ratio"], rows)}`;
}

function judge(summary: Record<string, PageSummary>) {
  return TARGETS.flatMap(({ label, pages, metric, holds }) =>
    pages.map((page) => {
      const { ours, scriptFree } = summary[page]!;
      return {
        target: label,
        page,
        measured: format(metric, ours[metric]),
        limit: format(metric, scriptFree[metric]),
        holds: holds(ours, scriptFree),
      };
    }),
  );
}

function report(
  summary: Record<string, PageSummary>,
  verdicts: ReturnType<typeof judge>,
  header: string,
): string {
  const targetRows = verdicts.map((v) => [
    v.target,
    `\`${v.page}\``,
    v.measured,
    v.limit,
    v.holds ? "✓ holds" : "✗ misses",
  ]);
  return [
    header,
    ...PAGES.map((page) => pageTable(page, summary[page]!)),
    `### Targets\n\n${table(["Target", "Page", BUILDS.ours, BUILDS.scriptFree, ""], targetRows)}`,
  ].join("\n\n");
}

async function main() {
  const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs wants a whole number ≥ 1, got ${values.runs}`);

  const built = await exited(astro("build"));
  if (built !== 0) process.exit(built);
  const started = performance.now();
  const roots = { ours: await copyOfBuild(), scriptFree: await copyOfBuild() };
  await stripScripts(roots.scriptFree);
  const servers = { ours: await serve(roots.ours), scriptFree: await serve(roots.scriptFree) };
  let measured: Awaited<ReturnType<typeof measureAll>>;
  try {
    measured = await measureAll({ ours: servers.ours.origin, scriptFree: servers.scriptFree.origin }, runs);
  } finally {
    await Promise.all([servers.ours.close(), servers.scriptFree.close()]);
    await Promise.all(Object.values(roots).map((root) => rm(root, { recursive: true, force: true })));
  }

  const { samples, versions } = measured;
  const summary = Object.fromEntries(
    PAGES.map((page) => [
      page,
      { ours: medians(samples[page]!.ours), scriptFree: medians(samples[page]!.scriptFree) },
    ]),
  );
  const verdicts = judge(summary);
  const environment = {
    date: new Date().toISOString(),
    runs,
    ...versions,
    profile: "default mobile, simulated",
  };
  const header =
    `Lighthouse ${versions.lighthouse} (${versions.browser}), default mobile profile with simulated ` +
    `throttling, median of ${runs} runs, ${environment.date.slice(0, 10)}.`;

  console.log(`\n${runs} runs in ${((performance.now() - started) / 1000).toFixed(0)} s.\n`);
  console.log(report(summary, verdicts, header));
  await mkdir(dirname(RESULTS), { recursive: true });
  await writeFile(
    RESULTS,
    `${JSON.stringify({ environment, summary, targets: verdicts, samples }, null, 2)}\n`,
  );
  console.log(`\nEvery sample: ${RESULTS}`);
}

await main();
