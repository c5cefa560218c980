// @ts-check
import { existsSync } from "node:fs";
import { defineConfig, devices } from "@playwright/test";
import { CHROMIUM_FLAGS, SYSTEM_CHROMIUM } from "./tests/chromium.ts";

const PORT = Number(process.env.E2E_PORT ?? 4321);

export default defineConfig({
  testDir: "tests/e2e",
  outputDir: "test-results",
  fullyParallel: true,
  forbidOnly: !!process.env.CI,
  retries: process.env.CI ? 1 : 0,
  reporter: process.env.CI ? [["list"], ["html", { open: "never" }]] : "list",
  use: {
    baseURL: `http://localhost:${PORT}`,
    trace: "on-first-retry",
    launchOptions: {
      // Debian's Chromium where it is installed (no browser download is possible there);
      // elsewhere the one `npx playwright install chromium` fetched.
      executablePath: existsSync(SYSTEM_CHROMIUM) ? SYSTEM_CHROMIUM : undefined,
      args: CHROMIUM_FLAGS,
    },
  },
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"] } }],
  webServer: {
    // The production build served as `npm start` serves it, with the embedded backend.
    command: `node server/start.ts${process.env.E2E_PREBUILT ? " --no-build" : ""}`,
    url: `http://localhost:${PORT}`,
    // An in-memory database: each run starts empty, so no result depends on an earlier run.
    env: {
      PORT: String(PORT),
      SUPABASE_DATA_DIR: "memory://",
      SUPABASE_SEED_FILE: "tests/lift-sign-up-limits.sql",
    },
    reuseExistingServer: !process.env.CI,
    timeout: 120_000,
    stdout: "ignore",
    stderr: "pipe",
  },
});
