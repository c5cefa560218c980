// @ts-check
import { defineConfig } from "vitest/config";

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
        // The embedded Supabase backend, driven through supabase-js over real HTTP.
        test: {
          name: "backend",
          include: ["tests/backend/**/*.test.ts"],
          environment: "node",
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The static host `npm start` serves the build with.
        test: {
          name: "server",
          include: ["tests/server/**/*.test.ts"],
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
        },
      },
    ],
  },
});
