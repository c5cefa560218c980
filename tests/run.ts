// `npm test`: build the site once, then run every suite against that build: units, the
// local Supabase's contract and the size budget (Vitest), then the browser tests (Playwright).
// Ends with one line counting every test: "N passed, N failed".
//
// Everything runs in a world of its own (tests/test-environment.ts): its own ports, its own
// build folder, a throwaway database, whatever `.env` says and whatever else is running.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
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

for (const [name, args, env] of steps) {
  console.log(`\n▶ ${name}`);
  const { status } = spawnSync(process.execPath, args, { stdio: "inherit", env: { ...process.env, ...env } });
  if (status !== 0) {
    console.error(`✖ ${name} failed (exit ${status})`);
    process.exit(status ?? 1);
  }
}

const vitest = JSON.parse(readFileSync(vitestReport, "utf8"));
const { stats } = JSON.parse(readFileSync(playwrightReport, "utf8"));
const passed = vitest.numPassedTests + stats.expected + stats.flaky;
const failed = vitest.numFailedTests + stats.unexpected;
const skipped = vitest.numPendingTests + vitest.numTodoTests + stats.skipped;
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
