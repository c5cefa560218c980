// The expressions the workflow tests evaluate (expressions.ts), held to what GitHub's docs
// ("Evaluate expressions in workflows and actions") say they do, so that a job's `if:` that passes
// here passes on GitHub.
import { describe, expect, it } from "vitest";
import { evaluate, runs } from "./expressions.ts";

const contexts = {
  github: {
    event_name: "workflow_dispatch",
    ref_name: "feature",
    event: { repository: { default_branch: "main" } },
  },
  vars: { SITE_URL: "" },
  secrets: {},
  steps: { settings: { outcome: "success", outputs: { watch: "true" } } },
  needs: { pending: { outputs: { migrations: "" } } },
};

describe("GitHub's expressions", () => {
  it.each([
    // Strings compare without their case.
    ["github.event_name == 'WORKFLOW_DISPATCH'", true],
    ["github.ref_name == github.event.repository.default_branch", false],
    // A missing property is null, which equals '' (both are 0 as numbers).
    ["needs.pending.outputs.nothing == ''", true],
    ["needs.pending.outputs.migrations != ''", false],
    ["steps.settings.outputs.watch == 'true' && github.event_name != 'pull_request'", true],
    // `||` gives the first truthy operand itself.
    ["vars.SITE_URL || 'https://example.com'", "https://example.com"],
    ["!(steps.settings.outputs.watch == 'true')", false],
    ["'it''s'", "it's"],
  ] as const)("%s is %s", (expression, value) => {
    expect(evaluate(`\${{ ${expression} }}`, contexts)).toBe(value);
    expect(evaluate(expression, contexts)).toBe(value);
  });

  it("refuses what it does not know, rather than passing it unevaluated", () => {
    expect(() => evaluate("contains(github.ref, 'main')", contexts)).toThrow(/cannot evaluate/);
    expect(() => evaluate("env.X == ''", contexts)).toThrow(/cannot evaluate/);
    expect(() => evaluate("github.ref == 'a' 'b'", contexts)).toThrow(/cannot evaluate/);
  });

  it.each([
    // No status function: success() && (…), so nothing runs after a failure…
    [undefined, false, true],
    [undefined, true, false],
    ["steps.settings.outputs.watch == 'true'", true, false],
    // …but what asks for it.
    ["${{ !cancelled() && steps.settings.outputs.watch == 'true' }}", true, true],
    ["always()", true, true],
    ["failure()", false, false],
    ["failure()", true, true],
  ] as const)("if: %s, after a failure: %s, runs: %s", (condition, failed, expected) => {
    expect(runs(condition, contexts, { failed })).toBe(expected);
  });
});
