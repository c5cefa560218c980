// @ts-check
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import prettier from "eslint-config-prettier";
import astro from "eslint-plugin-astro";
import globals from "globals";
import tseslint from "typescript-eslint";

/** An import that leaves the importing file's folder for one of these top-level folders. */
const into = (/** @type {string[]} */ ...folders) => `^(\\.\\./)+(${folders.join("|")})(/|$)`;

/**
 * A boundary between the parts of the project (README.md, "Layout"): what `files` may not import.
 * @param {string[]} files
 * @param {string} regex
 * @param {string} message
 * @returns {import("eslint").Linter.Config}
 */
const boundary = (files, regex, message) => ({
  files,
  rules: { "no-restricted-imports": ["error", { patterns: [{ regex, message }] }] },
});

export default defineConfig(
  {
    ignores: ["dist/", ".astro/", "node_modules/", "test-results/", "playwright-report/", "tests/artifacts/"],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  astro.configs.recommended,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
  },
  boundary(
    ["src/**"],
    into("config", "tools", "tests", "bench", "supabase"),
    "The site imports from src/ alone: it is what visitors download.",
  ),
  boundary(
    ["tools/**"],
    `${into("tests")}|^(\\.\\./)+src/(?!lib/(sign-up-rules|calendar-day)\\.ts$)`,
    "The tools take from the site only its pure rules (src/lib/sign-up-rules.ts, src/lib/calendar-day.ts), and nothing from the tests.",
  ),
  boundary(
    ["bench/**"],
    `^(\\.\\./)+tests/(?!deploy/|support/project-copy\\.ts$)|^(\\.\\./)+src/(?!lib/(sign-up-rules|calendar-day)\\.ts$)`,
    "The benches take from the site only its pure rules, and from the tests only the deploy's stand-ins of accounts and a copy of the project (bench/deploy.ts).",
  ),
  boundary(
    ["config/**"],
    into("src", "tools", "tests", "bench"),
    "config/ holds what the site's build and the tools share: it imports neither.",
  ),
  prettier,
);
