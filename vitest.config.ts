// @ts-check
import { defineConfig } from "vitest/config";
import type { PostgresMajor } from "./tools/local-supabase/database/cluster.ts";
import { useTestEnvironment } from "./tests/test-environment.ts";

// Ports, build folder and database of the tests' own, handed down to every worker and every
// process a test starts (tests/test-environment.ts).
useTestEnvironment();

/**
 * The run's PostgreSQL server of one major, set up as a hosted Supabase project is
 * (tests/support/). Hosted Supabase runs 15 and 17: what the tests prove about the database, they
 * prove on each, a project per major (`database` on 17, `database-pg15` on 15, and so on).
 */
const postgres = (major: PostgresMajor) => ({
  environment: "node",
  globalSetup: ["tests/support/postgres.setup.ts"],
  provide: { postgresMajor: major },
  testTimeout: 30_000,
  hookTimeout: 60_000,
});
/** The site built once into the run's own folder. */
const build = { environment: "node", globalSetup: ["tests/support/build.setup.ts"] };

// One project per subject, named after its folder in tests/ (tests/README.md).
export default defineConfig({
  test: {
    projects: [
      {
        // The site's logic and islands, in a simulated DOM.
        test: { name: "site", include: ["tests/site/*.test.{ts,tsx}"], environment: "jsdom" },
        esbuild: { jsx: "automatic" },
      },
      // What the build ships, and an editor's change built anew.
      { test: { name: "site-build", include: ["tests/site/build/**/*.test.ts"], ...build } },
      // The database's rules, on a real server with real concurrent connections.
      { test: { name: "database", include: ["tests/database/**/*.test.ts"], ...postgres(17) } },
      { test: { name: "database-pg15", include: ["tests/database/**/*.test.ts"], ...postgres(15) } },
      // The local Supabase: its REST answers, its process and its data folder.
      { test: { name: "local-supabase", include: ["tests/local-supabase/**/*.test.ts"], ...postgres(17) } },
      // Its answers again on 15; its process, data folder and log are `npm run backend`'s, on 17.
      {
        test: {
          name: "local-supabase-pg15",
          include: ["tests/local-supabase/**/*.test.ts"],
          exclude: ["tests/local-supabase/{process,data-folder,persistence,server-log}.test.ts"],
          ...postgres(15),
        },
      },
      // The owner's command, as a process and its pure parts.
      { test: { name: "sign-ups", include: ["tests/sign-ups/**/*.test.ts"], ...postgres(17) } },
      // The owner's command against a project on 15.
      { test: { name: "sign-ups-pg15", include: ["tests/sign-ups/owner-command.test.ts"], ...postgres(15) } },
      // The static host `npm start` uses, and deploy/nginx.conf in a real nginx.
      { test: { name: "hosting", include: ["tests/hosting/**/*.test.ts"], ...build } },
      // The settings the build and every command read.
      { test: { name: "config", include: ["tests/config/**/*.test.ts"], environment: "node" } },
      // A developer's running `npm start` is left alone by a test run.
      { test: { name: "isolation", include: ["tests/isolation/**/*.test.ts"], environment: "node" } },
      // Every path the documents and comments name is there.
      { test: { name: "docs", include: ["tests/docs/**/*.test.ts"], environment: "node" } },
      // What `npm ci` installs: every platform's native binaries are in the lock.
      { test: { name: "install", include: ["tests/install/**/*.test.ts"], environment: "node" } },
      // GitHub's workflows: actionlint, and their steps run here (the watch against a local Supabase).
      { test: { name: "workflows", include: ["tests/workflows/**/*.test.ts"], ...postgres(17) } },
    ],
  },
});
