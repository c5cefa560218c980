// @ts-check
import { defineConfig, devices } from "@playwright/test";
import { systemChromium, TEST_CHROMIUM_FLAGS } from "./tools/chromium.ts";
import { useTestEnvironment } from "./tests/test-environment.ts";

// Ports, build folder and database of the tests' own, never the developer's; `npm test` has
// chosen them already and built the site there (E2E_PREBUILT), `npx playwright test` alone
// chooses them here and builds.
const { siteUrl, dist } = useTestEnvironment();

export default defineConfig({
  // Every browser test, beside the tests of the same subject (tests/README.md).
  testDir: "tests",
  testMatch: "**/*.spec.ts",
  outputDir: "test-results",
  fullyParallel: true,
  // Two browsers at once on the 2-core machine, beside Vitest's two files (tests/run.ts): a
  // browser test mostly waits (for the page, its timers, the local Supabase).
  workers: 2,
  // Limits for a test that hangs, not for a slow one: on a machine shared with other work (load
  // average 20 on 2 cores, seen) a page and the local Supabase answer many times slower, and
  // Playwright's defaults (30 s a test, 5 s an expectation) failed tests that pass alone. A
  // test that passes takes no longer for them.
  timeout: 120_000,
  expect: { timeout: 20_000 },
  forbidOnly: !!process.env.CI,
  retries: process.env.CI ? 1 : 0,
  reporter: process.env.CI ? [["list"], ["html", { open: "never" }]] : "list",
  use: {
    baseURL: siteUrl,
    trace: "on-first-retry",
    launchOptions: {
      // Debian's Chromium where it is installed (no browser download is possible there);
      // elsewhere the one `npx playwright install chromium` fetched (`npm test` fetches it:
      // tests/prerequisites/).
      executablePath: systemChromium(),
      args: TEST_CHROMIUM_FLAGS,
    },
  },
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"] } }],
  webServer: {
    // The production build served as `npm start` serves it, with the local Supabase on a
    // throwaway database (so each run starts empty), on the tests' own ports. Every setting it
    // reads is in the environment useTestEnvironment() set, which it inherits.
    command: `node tools/start.ts --dist ${dist}${process.env.E2E_PREBUILT ? " --no-build" : ""}`,
    url: siteUrl,
    // Never a server someone else started: its data and its build are not the tests' to touch.
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "ignore",
    stderr: "pipe",
    // Stopped as Ctrl-C stops it, so that it stops its database server and removes its folder
    // (the server runs in a process group of its own, which a kill of npm start's would miss).
    gracefulShutdown: { signal: "SIGINT", timeout: 10_000 },
  },
});
