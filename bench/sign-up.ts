// `npm run bench:sign-up [-- --runs N] [--dist DIR]` (and the second half of `npm run bench`): how soon a quick
// visitor is signed up, on a phone-like connection, from a cold start.
//
// A fresh browser context (empty cache) per run loads `/` under Lighthouse's slow-4G figures
// (150 ms round trip, 1.6 Mbps down, 750 kbps up, applied by Chromium's own throttling through
// CDP) and a 4× slower CPU. Two visitors, in turns:
//   - instant: the browser fills the address (autofill, a paste) and Enter is pressed the moment
//     the field appears, long before the form's island has hydrated;
//   - typed: clicks the field as soon as it appears and types the address at 80 ms a key, then
//     Enter.
// Every time is read inside the page (performance.now(), from navigation), never by polling
// from here. It builds the site into a folder of its own, with the tests' pinned settings
// (tests/test-environment.ts), so neither a developer's `.env` nor `dist/` is involved.
//
// Prints the medians with their targets (VISITORS below) and writes every sample to
// bench/results/sign-up.json. It prints figures, never fails on them.
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { parseArgs } from "node:util";
import { chromium, type Browser, type Page } from "playwright";
import { exited, packageBin } from "../server/processes.ts";
import { CHROMIUM_FLAGS, SYSTEM_CHROMIUM } from "../tests/chromium.ts";
import { useTestEnvironment } from "../tests/test-environment.ts";
import { median, ms, serve, table } from "./support.ts";

const RESULTS = "bench/results/sign-up.json";

// Lighthouse's mobile "slow 4G" (its throttling.mobileSlow4G) and CPU slowdown.
const KBPS = 1024 / 8; // bytes per second in one kbps, as Lighthouse counts
const NETWORK = {
  offline: false,
  latency: 150,
  downloadThroughput: 1.6 * 1024 * KBPS,
  uploadThroughput: 750 * KBPS,
};
const CPU_SLOWDOWN = 4;
// Lighthouse's mobile screen.
const VIEWPORT = { width: 412, height: 823 };

const KEY_DELAY_MS = 80;
const REST_DELAY_MS = 100;

/** What each run reads from the page, in ms from navigation. */
interface Sample {
  firstPaint: number;
  field: number;
  enter: number;
  success: number;
}

const VISITORS = {
  instant: {
    label: "instant fill + Enter",
    target: { label: "success ≤ first paint + 1300 ms", from: "firstPaint", within: 1300 },
  },
  typed: {
    label: `typed at ${KEY_DELAY_MS} ms a key`,
    target: { label: "success ≤ Enter + 300 ms", from: "enter", within: 300 },
  },
} as const satisfies Record<
  string,
  { label: string; target: { label: string; from: keyof Sample; within: number } }
>;
type Visitor = keyof typeof VISITORS;

/**
 * Runs in the page before any of its own scripts: notes when the email field is first visible,
 * when Enter is first pressed, and the first frame that shows the success panel.
 */
function watchSignUp() {
  const times: Partial<Record<"field" | "enter" | "success", number>> = {};
  Object.assign(window, { signUpTimes: times });
  addEventListener("keydown", (event) => event.key === "Enter" && (times.enter ??= performance.now()), true);
  const field = () => {
    const input = document.querySelector<HTMLInputElement>("input[name=email]");
    if (input?.checkVisibility()) times.field = performance.now();
    else requestAnimationFrame(field);
  };
  requestAnimationFrame(field);
  new MutationObserver((_, observer) => {
    if (!document.querySelector("[data-testid=success-panel]")) return;
    observer.disconnect();
    requestAnimationFrame(() => (times.success = performance.now()));
  }).observe(document, { childList: true, subtree: true });
}

/**
 * The Supabase REST answer is a stub: 201 with the row, 100 ms after the request, as a healthy
 * project answers. The bench measures the page (what it loads, when it sends), not the database
 * or its distance. Playwright answers the CORS preflight of a routed request itself, and
 * Chromium's throttling does not reach routed answers, so the round trips to Supabase (preflight
 * and POST, about 2 × 150 ms on this network) are not in the figures.
 */
async function stubRest(page: Page): Promise<void> {
  // Whatever Supabase origin the build was made for.
  await page.route("**/rest/v1/early_access*", async (route) => {
    await new Promise((wait) => setTimeout(wait, REST_DELAY_MS));
    await route.fulfill({
      status: 201,
      contentType: "application/json",
      headers: { "Access-Control-Allow-Origin": "*" },
      body: JSON.stringify([route.request().postDataJSON()]),
    });
  });
}

async function run(browser: Browser, url: string, visitor: Visitor, n: number) {
  const context = await browser.newContext({ viewport: VIEWPORT });
  try {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", NETWORK);
    await cdp.send("Emulation.setCPUThrottlingRate", { rate: CPU_SLOWDOWN });
    await page.addInitScript(watchSignUp);
    await stubRest(page);

    // By name: the labels live in the content file, which plain Node cannot read through its schema.
    const email = page.locator("input[name=email]");
    const address = `bench-${visitor}-${n}@example.com`;
    await page.goto(url, { waitUntil: "commit" });
    if (visitor === "instant") {
      await email.fill(address);
      await email.press("Enter");
    } else {
      await email.click();
      await email.pressSequentially(address, { delay: KEY_DELAY_MS });
      await email.press("Enter");
    }
    await page.getByTestId("success-panel").waitFor({ timeout: 60_000 });
    return await page
      .waitForFunction(() => {
        const times = (window as unknown as { signUpTimes: Partial<Sample> }).signUpTimes;
        const paint = performance.getEntriesByName("first-contentful-paint")[0];
        if (times.success === undefined || !paint) return null;
        // Laid out is not yet seen: nothing shows before the first paint.
        return { ...times, field: Math.max(times.field!, paint.startTime), firstPaint: paint.startTime };
      })
      .then((handle) => handle.jsonValue() as Promise<Sample>);
  } finally {
    await context.close();
  }
}

/** The site, built into the tests' own folder with their pinned settings. */
async function build(dist: string): Promise<void> {
  const child = spawn(process.execPath, [packageBin("astro"), "build", "--outDir", dist], {
    stdio: "inherit",
    env: { ...process.env, NODE_ENV: "production" },
  });
  const code = await exited(child);
  if (code !== 0) throw new Error(`The build failed (exit ${code}).`);
}

const FIGURES: Array<{ label: string; read: (sample: Sample) => number }> = [
  { label: "first paint", read: (s) => s.firstPaint },
  { label: "field visible", read: (s) => s.field },
  { label: "Enter", read: (s) => s.enter },
  { label: "success", read: (s) => s.success },
  { label: "success − first paint", read: (s) => s.success - s.firstPaint },
  { label: "success − Enter", read: (s) => s.success - s.enter },
];

async function main() {
  const { values } = parseArgs({
    options: {
      runs: { type: "string", default: "5" },
      // A build made elsewhere (an older commit's, say, to compare), served as it is.
      dist: { type: "string" },
    },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs wants a whole number ≥ 1, got ${values.runs}`);

  let dist = values.dist;
  if (!dist) {
    dist = useTestEnvironment().dist;
    await build(dist);
  }
  const site = await serve(dist);
  const browser = await chromium.launch({ executablePath: SYSTEM_CHROMIUM, args: CHROMIUM_FLAGS });
  const samples: Record<Visitor, Sample[]> = { instant: [], typed: [] };
  try {
    for (let n = 1; n <= runs; n++) {
      for (const visitor of Object.keys(VISITORS) as Visitor[]) {
        const sample = await run(browser, `${site.origin}/`, visitor, n);
        samples[visitor].push(sample);
        const figures = FIGURES.map(({ label, read }) => `${label} ${ms(read(sample))}`);
        console.log(`run ${n}/${runs}  ${visitor.padEnd(8)} ${figures.join("  ")}`);
      }
    }
  } finally {
    await browser.close();
    await site.close();
  }

  const medians = Object.fromEntries(
    (Object.keys(VISITORS) as Visitor[]).map((visitor) => [
      visitor,
      Object.fromEntries(FIGURES.map(({ label, read }) => [label, median(samples[visitor].map(read))])),
    ]),
  ) as Record<Visitor, Record<string, number>>;
  const verdicts = (Object.keys(VISITORS) as Visitor[]).map((visitor) => {
    const { target } = VISITORS[visitor];
    const measured = median(samples[visitor].map((s) => s.success - s[target.from]));
    return { visitor, target: target.label, measured, holds: measured <= target.within };
  });

  const date = new Date().toISOString();
  console.log(
    `\nSign-up at first paint: slow 4G (150 ms, 1.6 Mbps down, 750 kbps up), ${CPU_SLOWDOWN}× CPU, ` +
      `REST stubbed at ${REST_DELAY_MS} ms, median of ${runs} runs, ${date.slice(0, 10)}.\n`,
  );
  console.log(
    table(
      ["Median, from navigation", ...Object.values(VISITORS).map(({ label }) => label)],
      FIGURES.map(({ label }) => [
        label,
        ...(Object.keys(VISITORS) as Visitor[]).map((v) => ms(medians[v][label]!)),
      ]),
    ),
  );
  console.log(
    `\n${table(
      ["Visitor", "Target", "Median", ""],
      verdicts.map((v) => [VISITORS[v.visitor].label, v.target, ms(v.measured), v.holds ? "PASS" : "MISS"]),
    )}`,
  );
  await mkdir(dirname(RESULTS), { recursive: true });
  await writeFile(
    RESULTS,
    `${JSON.stringify({ environment: { date, runs, network: NETWORK, cpuSlowdown: CPU_SLOWDOWN }, medians, targets: verdicts, samples }, null, 2)}\n`,
  );
  console.log(`\nEvery sample: ${RESULTS}`);
}

await main();
