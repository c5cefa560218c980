// `npm test`: build the site once, then run every suite against that build: units, the
// embedded backend's contract and the size budget (Vitest), then the browser tests (Playwright).
import { spawnSync } from "node:child_process";
import { packageBin } from "../server/processes.ts";

const steps: [string, string[], NodeJS.ProcessEnv?][] = [
  ["build", [packageBin("astro"), "build"]],
  ["vitest", [packageBin("vitest"), "run"]],
  ["playwright", [packageBin("@playwright/test"), "test"], { E2E_PREBUILT: "1" }],
];

for (const [name, args, env] of steps) {
  console.log(`\n▶ ${name}`);
  const { status } = spawnSync(process.execPath, args, { stdio: "inherit", env: { ...process.env, ...env } });
  if (status !== 0) {
    console.error(`✖ ${name} failed (exit ${status})`);
    process.exit(status ?? 1);
  }
}
