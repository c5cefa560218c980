// @ts-check
import { defineConfig } from "vitest/config";
import { useTestEnvironment } from "./tests/test-environment.ts";

// Ports, build folder and database of the tests' own, handed down to every worker and every
// process a test starts (tests/test-environment.ts).
useTestEnvironment();

export default defineConfig({
  test: {
    projects: [
      {
        // Pure logic and the React islands, in a simulated DOM.
        test: {
          name: "unit",
          include: ["tests/unit/**/*.test.{ts,tsx}"],
          environment: "jsdom",
        },
        esbuild: { jsx: "automatic" },
      },
      {
        // The local Supabase backend, driven through supabase-js over real HTTP, on a real
        // PostgreSQL server with real concurrent connections, set up as a hosted Supabase
        // project is (tests/backend/postgres/).
        test: {
          name: "backend",
          include: ["tests/backend/**/*.test.ts"],
          environment: "node",
          globalSetup: ["tests/backend/postgres/setup.ts"],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The static host `npm start` serves the build with, and the build it serves.
        test: {
          name: "server",
          include: ["tests/server/**/*.test.ts"],
          environment: "node",
          globalSetup: ["tests/build.setup.ts"],
        },
      },
      {
        // deploy/nginx.conf in a real nginx, serving the tests' own build.
        test: {
          name: "deploy",
          include: ["tests/deploy/**/*.test.ts"],
          environment: "node",
          globalSetup: ["tests/build.setup.ts"],
        },
      },
      {
        // An editor's change to the content file, built in a copy of the project, against the
        // tests' own build of this one.
        test: {
          name: "editing",
          include: ["tests/editing/**/*.test.ts"],
          environment: "node",
          globalSetup: ["tests/build.setup.ts"],
        },
      },
      {
        // The tests leave a developer's running `npm start` alone: its data, its build, its ports.
        test: {
          name: "isolation",
          include: ["tests/isolation/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        // What `npm ci` installs: every platform's native binaries are in the lock.
        test: {
          name: "install",
          include: ["tests/install/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        // What the production build in dist/ ships: bytes, not time, so it never flakes.
        test: {
          name: "budget",
          include: ["tests/budget/**/*.test.ts"],
          environment: "node",
          globalSetup: ["tests/build.setup.ts"],
        },
      },
    ],
  },
});
