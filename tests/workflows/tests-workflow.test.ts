// The tests' workflow (.github/workflows/test.yml) runs what the README and .ci/run say the tests
// are: the README's test command, after the same install, lint and type-check, in that order; once
// per change: on every push, and on a pull request from a fork (a branch of this repository was
// tested by its push). Its browser is Playwright's own, cached under its version.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withoutTestEnvironment } from "../test-environment.ts";
import { evaluate } from "./expressions.ts";
import { REPOSITORY, ROOT, readWorkflow, runSteps } from "./workflow.ts";

const workflow = readWorkflow("test.yml");
const steps = workflow.jobs.test!.steps;
const commands = steps.flatMap((step) => (step.run ? [step.run.trim()] : []));

/** The README's Quick start: the line that runs every test. */
const readmeTestCommand = /^(npm test)\s+#/m.exec(readFileSync(join(ROOT, "README.md"), "utf8"))?.[1];

describe("the tests' workflow", () => {
  it("is started by every push and pull request", () => {
    expect(Object.keys(workflow.on).sort()).toEqual(["pull_request", "push"]);
    expect(workflow.on.push).toBeNull();
    expect(workflow.on.pull_request).toBeNull();
  });

  it.each([
    ["a push to any branch", { event_name: "push" }, true],
    [
      "a pull request from a branch of this repository (its push ran them)",
      { event_name: "pull_request", event: { pull_request: { head: { repo: { full_name: REPOSITORY } } } } },
      false,
    ],
    [
      "a pull request from a fork (whose pushes run nothing here)",
      {
        event_name: "pull_request",
        event: { pull_request: { head: { repo: { full_name: "someone/fork" } } } },
      },
      true,
    ],
  ])("runs the tests once per change: %s, %s", (_, github, runs) => {
    expect(evaluate(workflow.jobs.test!.if!, { github: { repository: REPOSITORY, ...github } })).toBe(runs);
  });

  it("tells a fork's pull request that it gets no secrets and needs none, not that anything is missing", async () => {
    const fork = steps.find((step) => step.name === "A fork's pull request")!;
    const context = { github: { event_name: "pull_request" } };
    const run = await runSteps([fork], { baseEnv: withoutTestEnvironment(process.env), context });
    expect(run.status, run.output).toBe(0);
    const message =
      "GitHub gives a pull request from a fork no secrets, and this one needs none: the tests run as they would " +
      "here. The migrations are listed and pushed after the merge, on the default branch.";
    expect(run.output).toBe(`::notice title=A fork's pull request::${message}\n`);
    expect(run.summary).toBe(`## A fork's pull request\n\n${message}\n`);
    const onPush = await runSteps([fork], {
      baseEnv: withoutTestEnvironment(process.env),
      context: { github: { event_name: "push" } },
    });
    expect(onPush.output).toBe("");
  });

  it("runs the README's test command", () => {
    expect(readmeTestCommand).toBe("npm test");
    expect(steps.find((step) => step.name === "Test")?.run?.trim()).toBe(readmeTestCommand);
  });

  it("runs .ci/run's commands, in its order", () => {
    const ci = readFileSync(join(ROOT, ".ci/run"), "utf8")
      .split("\n")
      .filter((line) => /^npm /.test(line));
    expect(ci).toEqual(["npm ci --no-audit --no-fund", "npm run lint", "npm run check", "npm test"]);
    expect(commands.filter((command) => ci.includes(command))).toEqual(ci);
  });

  it("caches Playwright's Chromium under the version this lock installs", async () => {
    const which = steps.find((step) => step.id === "playwright")!;
    const run = await runSteps([which], { baseEnv: withoutTestEnvironment(process.env) });
    expect(run.status, run.output).toBe(0);
    const { version } = JSON.parse(
      readFileSync(join(ROOT, "node_modules/playwright-core/package.json"), "utf8"),
    ) as { version: string };
    expect(run.outputs).toBe(`version=${version}\n`);
    const cache = steps.find((step) => step.uses?.startsWith("actions/cache@"))!;
    expect(cache.with).toMatchObject({
      path: "~/.cache/ms-playwright",
      key: expect.stringContaining("${{ steps.playwright.outputs.version }}"),
    });
  });
});
