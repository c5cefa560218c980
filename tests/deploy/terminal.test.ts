// `npm run deploy` on a terminal: a missing setting asked for, saying where to find it, a secret
// typed without echo and kept in `.env.deploy` (git-ignored, readable by its owner alone), read
// from there on the next run. The terminal is a real pseudo-terminal, util-linux's `script`, in a
// copy of the project that is a git repository (so that git says what it ignores).
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_PUBLISHABLE_KEY } from "../../config/local-supabase.ts";
import { freePorts } from "../../tools/processes.ts";
import { withoutTestEnvironment } from "../test-environment.ts";
import { copyProject } from "../support/project-copy.ts";

const SECRET = "typed-not-shown";

let copy: string;
let dbUrl: string;
beforeAll(() => {
  copy = copyProject("future-awaits-terminal-");
  spawnSync("git", ["init", "-q"], { cwd: copy });
  // A port nothing answers on: the run stops at the database, after the settings.
  dbUrl = `postgresql://postgres:${SECRET}@127.0.0.1:${freePorts(1)[0]}/postgres?sslmode=disable`;
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

const env = {
  ...withoutTestEnvironment(process.env),
  PUBLIC_SUPABASE_URL: "http://127.0.0.1:1",
  PUBLIC_SUPABASE_PUBLISHABLE_KEY: LOCAL_PUBLISHABLE_KEY,
  SITE_URL: "http://127.0.0.1:2",
};

/** Runs the command on a pseudo-terminal, typing `answer` once `prompt` shows; all it printed. */
function onTerminal(prompt: string, answer: string): Promise<string> {
  const child = spawn(
    "script",
    ["-qfec", `"${process.execPath}" tools/deploy/cli.ts --host none`, "/dev/null"],
    {
      cwd: copy,
      env,
    },
  );
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk;
    if (output.includes(prompt) && answer) {
      child.stdin.write(`${answer}\r`);
      answer = "";
    }
  });
  return new Promise((resolve) => child.on("close", () => resolve(output)));
}

describe("npm run deploy on a terminal", () => {
  it(
    "asks for a missing secret, saying where it is, and echoes nothing of it",
    { timeout: 60_000 },
    async () => {
      const output = await onTerminal(
        "SUPABASE_DB_PUSH_URL (the dashboard's Connect → Session pooler",
        dbUrl,
      );
      expect(output).not.toContain(SECRET);
      expect(output).toMatch(/does not answer/);
    },
  );

  it("kept it in .env.deploy, readable by its owner alone, and git ignores that file", () => {
    const file = join(copy, ".env.deploy");
    expect(readFileSync(file, "utf8")).toContain(`SUPABASE_DB_PUSH_URL='${dbUrl}'`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(
      spawnSync("git", ["status", "--porcelain", "--", ".env.deploy"], { cwd: copy, encoding: "utf8" })
        .stdout,
    ).toBe("");
  });

  it("reads it from there next time, without a terminal", { timeout: 60_000 }, () => {
    const { stdout, stderr } = spawnSync(process.execPath, ["tools/deploy/cli.ts", "--host", "none"], {
      cwd: copy,
      env,
      encoding: "utf8",
    });
    expect(stderr).not.toMatch(/SUPABASE_DB_PUSH_URL: not set/);
    expect(`${stdout}${stderr}`).toMatch(/does not answer/);
    expect(`${stdout}${stderr}`).not.toContain(SECRET);
  });
});
