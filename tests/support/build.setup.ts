// Vitest's global set-up for the suites that read the build (tests/site/build, tests/hosting): the
// site built into the tests' own folder, unless `npm test` has built it there already. Both
// suites share one build, made once per run.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { exited, packageBin } from "../../tools/processes.ts";
import { useTestEnvironment } from "../test-environment.ts";

const BUILD = Symbol.for("future-awaits.tests.build");
const shared = globalThis as { [BUILD]?: Promise<void> };

export default async function setup(): Promise<void> {
  const { dist } = useTestEnvironment();
  shared[BUILD] ??= (async () => {
    if (existsSync(join(dist, "index.html"))) return;
    // Vitest runs with NODE_ENV=test, which would make Astro build React's development bundle.
    const build = spawn(process.execPath, [packageBin("astro"), "build", "--outDir", dist], {
      stdio: "inherit",
      env: { ...process.env, NODE_ENV: "production" },
    });
    const code = await exited(build);
    if (code !== 0) throw new Error(`The tests' build failed (exit ${code}).`);
  })();
  await shared[BUILD];
}
