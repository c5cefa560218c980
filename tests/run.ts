// `npm test`: build the site once, then run every suite against that build: units, the
// embedded backend's contract and the size budget (Vitest), then the browser tests (Playwright).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const bin = (specifier: string) => fileURLToPath(import.meta.resolve(specifier));

const steps: [string, string[], NodeJS.ProcessEnv?][] = [
  ["build", [bin("astro/bin/astro.mjs"), "build"]],
  ["vitest", [bin("vitest/vitest.mjs"), "run"]],
  ["playwright", [bin("@playwright/test/cli.js"), "test"], { E2E_PREBUILT: "1" }],
];

for (const [name, args, env] of steps) {
  console.log(`\n▶ ${name}`);
  const { status } = spawnSync(process.execPath, args, { stdio: "inherit", env: { ...process.env, ...env } });
  if (status !== 0) {
    console.error(`✖ ${name} failed (exit ${status})`);
    process.exit(status ?? 1);
  }
}
