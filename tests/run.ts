// `npm test`: build the site once, then run every suite against that build: units, the
// local Supabase's contract and the size budget (Vitest), then the browser tests (Playwright).
// Ends with one line counting every test that ran, "N passed, N failed, N skipped", whatever
// failed; the exit status is non-zero if any step failed. A failed build runs no tests.
//
// Everything runs in a world of its own (tests/test-environment.ts): its own ports, its own
// build folder, a throwaway database, whatever `.env` says and whatever else is running.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { packageBin } from "../tools/processes.ts";
import { useTestEnvironment } from "./test-environment.ts";

const { dist } = useTestEnvironment();
const runFolder = dirname(dist);
const vitestReport = join(runFolder, "vitest.json");
const playwrightReport = join(runFolder, "playwright.json");

const steps: [string, string[], NodeJS.ProcessEnv?][] = [
  ["build", [packageBin("astro"), "build", "--outDir", dist]],
  [
    "vitest",
    [
      packageBin("vitest"),
      "run",
      "--reporter=default",
      "--reporter=json",
      `--outputFile.json=${vitestReport}`,
    ],
  ],
  [
    "playwright",
    [packageBin("@playwright/test"), "test", `--reporter=${process.env.CI ? "list,html" : "list"},json`],
    { E2E_PREBUILT: "1", PLAYWRIGHT_JSON_OUTPUT_NAME: playwrightReport },
  ],
];

/** The steps that failed, each with what it left undone. */
const failures: string[] = [];
for (const [name, args, env] of steps) {
  console.log(`\n▶ ${name}`);
  const { status } = spawnSync(process.execPath, args, { stdio: "inherit", env: { ...process.env, ...env } });
  if (status === 0) continue;
  console.error(`✖ ${name} failed (exit ${status})`);
  // The tests need the build; a failed test step leaves the next one to run and be counted.
  if (name === "build") {
    failures.push("build failed, no tests ran");
    break;
  }
  failures.push(`${name} failed`);
}

/** A step's JSON report, if it got as far as writing one. */
const report = (path: string) => (existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : null);
const vitest = report(vitestReport);
const playwright = report(playwrightReport)?.stats;
const passed = (vitest?.numPassedTests ?? 0) + (playwright?.expected ?? 0) + (playwright?.flaky ?? 0);
const failed = (vitest?.numFailedTests ?? 0) + (playwright?.unexpected ?? 0);
const skipped = (vitest?.numPendingTests ?? 0) + (vitest?.numTodoTests ?? 0) + (playwright?.skipped ?? 0);
const failedSteps = failures.length ? `; ${failures.join("; ")}` : "";
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped${failedSteps}`);
process.exit(failures.length ? 1 : 0);
