// `npm test`: find or install what the tests need beyond npm (Chromium, nginx, openssl:
// tests/prerequisites/), build the site once, then run every suite against that build, side by
// side: the Vitest projects (units, the database, the local Supabase, the build's checks) and the
// browser tests (Playwright), each running its own files side by side too (vitest.config.ts,
// playwright.config.ts). Ends with how long each part took, then one line counting every test that
// ran, "N passed, N failed, N skipped", whatever failed; the exit status is non-zero if any step
// failed. A failed build runs no tests; a missing prerequisite that cannot be installed stops the
// run before any test, naming the command to run.
//
// `npm test -- <paths>` runs only those files: `.spec.ts` ones with Playwright, the others with
// Vitest; a step given no file of its kind is skipped.
//
// `npm run test:durations` (`--record-durations`) runs them all, and once every test has passed
// writes how long each Vitest file took into tests/durations.json (support/durations.ts), the
// record that orders the next runs' files.
//
// Everything runs in a world of its own (tests/test-environment.ts): its own ports, its own
// build folder, a throwaway database, whatever `.env` says and whatever else is running.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { packageBin } from "../tools/processes.ts";
import { ensurePrerequisites } from "./prerequisites/install.ts";
import { writeDurations } from "./support/durations.ts";
import type { ProjectTimes } from "./support/project-times.ts";
import { useTestEnvironment } from "./test-environment.ts";

const { dist } = useTestEnvironment();
const runFolder = dirname(dist);
const vitestReport = join(runFolder, "vitest.json");
const projectTimes = join(runFolder, "vitest-projects.json");
const playwrightReport = join(runFolder, "playwright.json");

const RECORD_DURATIONS = "--record-durations";
const recordDurations = process.argv.includes(RECORD_DURATIONS);
const paths = process.argv.slice(2).filter((arg) => arg !== RECORD_DURATIONS);
if (recordDurations && paths.length > 0) {
  console.error(`✖ ${RECORD_DURATIONS} records a run of every file: it takes no paths.`);
  process.exit(1);
}
const specs = paths.filter((path) => path.endsWith(".spec.ts"));
const others = paths.filter((path) => !path.endsWith(".spec.ts"));

interface Step {
  name: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
}

const build: Step = { name: "build", args: [packageBin("astro"), "build", "--outDir", dist] };
const vitest: Step = {
  name: "vitest",
  args: [
    packageBin("vitest"),
    "run",
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${vitestReport}`,
    "--reporter=./tests/support/project-times.ts",
    ...others,
  ],
  env: { VITEST_PROJECT_TIMES: projectTimes },
};
const playwright: Step = {
  name: "playwright",
  args: [
    packageBin("@playwright/test"),
    "test",
    `--reporter=${process.env.CI ? "list,html" : "list"},json`,
    ...specs,
  ],
  env: { E2E_PREBUILT: "1", PLAYWRIGHT_JSON_OUTPUT_NAME: playwrightReport },
};

/** How long each step took, in ms. */
const took = new Map<string, number>();

/**
 * Runs a step to its end; whether it passed. A `quiet` step's output is held back and printed
 * in one piece when it ends, so that two steps side by side do not interleave their lines.
 */
function run({ name, args, env }: Step, { quiet = false } = {}): Promise<boolean> {
  console.log(`\n▶ ${name}${quiet ? " (beside the others: its output follows when it ends)" : ""}`);
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit",
    env: { ...process.env, ...env },
  });
  const held: Buffer[] = [];
  child.stdout?.on("data", (chunk: Buffer) => held.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => held.push(chunk));
  return new Promise((resolve) =>
    child.on("close", (status) => {
      took.set(name, performance.now() - started);
      if (quiet) process.stdout.write(`\n▶ ${name}, as it ran:\n${Buffer.concat(held).toString()}`);
      if (status !== 0) console.error(`✖ ${name} failed (exit ${status})`);
      resolve(status === 0);
    }),
  );
}

const started = performance.now();

// Chromium, nginx and openssl, found or installed before any test (tests/prerequisites/); the
// browser tests need Chromium (so does tests/isolation, which runs some), the deploy test nginx.
const runs = (pattern: RegExp) => !paths.length || paths.some((path) => pattern.test(path));
const prerequisitesStarted = performance.now();
const stop = await ensurePrerequisites({
  chromium: runs(/\.spec\.ts$|isolation|^(\.\/)?tests\/?$/),
  nginx: runs(/hosting|^(\.\/)?tests\/?$/),
});
if (stop) {
  console.error(`✖ ${stop}`);
  process.exit(1);
}
took.set("prerequisites", performance.now() - prerequisitesStarted);

/** The steps that failed, each with what it left undone. */
const failures: string[] = [];
if (!(await run(build))) {
  failures.push("build failed, no tests ran");
} else {
  const chosen = paths.length
    ? [...(others.length ? [vitest] : []), ...(specs.length ? [playwright] : [])]
    : [vitest, playwright];
  // Side by side: most of either's time is spent waiting (for PostgreSQL, a process, a page),
  // and in turns the run left the 2 cores idle a quarter of the time. Vitest's output goes by
  // as it runs; the browser's follows in one piece. A step that fails leaves the other to run
  // and be counted.
  const passed = await Promise.all(chosen.map((step, index) => run(step, { quiet: index > 0 })));
  chosen.forEach((step, index) => passed[index] || failures.push(`${step.name} failed`));
}
const total = performance.now() - started;

/** A step's JSON report, if it got as far as writing one. */
const report = (path: string) => (existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : null);
const vitestResults = report(vitestReport);
const projects = report(projectTimes) as Record<string, ProjectTimes> | null;
const browser = report(playwrightReport)?.stats;

// How long each part took: wall time per step, and per Vitest project its span (projects overlap)
// and its files' durations added up (steadier on a busy machine).
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const rows: string[][] = [...took].map(([name, ms]) => [name, seconds(ms), ""]);
for (const [name, times] of Object.entries(projects ?? {}).sort(([, a], [, b]) => b.fileMs - a.fileMs)) {
  const counted = `${times.passed + times.failed + times.skipped} tests in ${times.files} files`;
  rows.push([`  ${name}`, seconds(times.end - times.start), `files ${seconds(times.fileMs)}; ${counted}`]);
}
rows.push(["total", seconds(total), ""]);
const widths = [0, 1].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
console.log(`\nTime taken (wall; Vitest's projects overlap):`);
for (const [name, wall, note] of rows) {
  console.log(`  ${name!.padEnd(widths[0]!)}  ${wall!.padStart(widths[1]!)}  ${note}`.trimEnd());
}

/** Vitest's files that failed with no failing test (a hook that threw: their tests show as skipped). */
type FileResult = { status: string; assertionResults: Array<{ status: string }> };
const brokenFiles = ((vitestResults?.testResults ?? []) as FileResult[]).filter(
  (file) => file.status === "failed" && !file.assertionResults.some((test) => test.status === "failed"),
).length;
const passed = (vitestResults?.numPassedTests ?? 0) + (browser?.expected ?? 0) + (browser?.flaky ?? 0);
// Each such file counts as one failure, so that the count never says 0 where a step failed.
const failed = (vitestResults?.numFailedTests ?? 0) + brokenFiles + (browser?.unexpected ?? 0);
const skipped =
  (vitestResults?.numPendingTests ?? 0) + (vitestResults?.numTodoTests ?? 0) + (browser?.skipped ?? 0);
if (failures.length) console.log(`\n${failures.join("; ")}`);
else if (recordDurations && projects) {
  writeDurations(projects);
  console.log("\nEach Vitest file's time written to tests/durations.json.");
}
// The last line, alone, is what CI reads.
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failures.length ? 1 : 0);
