// What the migrations' steps let through of the database's connection string
// (tools/github/mask.ts): nothing of it, whole, its password as written or percent-decoded, in any
// text the CLI prints; and, as a filter, line by line, whatever the chunks.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { masked, secretParts } from "../../tools/github/mask.ts";
import { withoutTestEnvironment } from "../test-environment.ts";
import { ROOT } from "./workflow.ts";

const URL =
  "postgresql://postgres.abcdefghijklmnopqrst:s3cr%40t%2Fpw@aws-0-eu-west-1.pooler.supabase.com:5432/postgres";

describe("masking the connection string", () => {
  it.each([
    ["the whole string", `failed to connect to ${URL}`, "failed to connect to ***"],
    ["the password as written", "password=s3cr%40t%2Fpw", "password=***"],
    ["the password decoded", 'password "s3cr@t/pw" refused', 'password "***" refused'],
    [
      "the user and host, which are not secret",
      "user postgres.abcdefghijklmnopqrst at aws-0-eu-west-1.pooler.supabase.com",
      "user postgres.abcdefghijklmnopqrst at aws-0-eu-west-1.pooler.supabase.com",
    ],
    ["each of several", "s3cr@t/pw and s3cr%40t%2Fpw", "*** and ***"],
  ])("%s", (_, text, expected) => {
    expect(masked(text, URL)).toBe(expected);
  });

  it.each([
    ["no string", undefined, []],
    [
      "no password",
      "postgresql://postgres@localhost:5432/postgres",
      ["postgresql://postgres@localhost:5432/postgres"],
    ],
    ["not a URL", "secret words", ["secret words"]],
    ["a password with nothing to decode", "postgresql://u:plain@h/d", ["postgresql://u:plain@h/d", "plain"]],
  ])("its parts, with %s", (_, url, parts) => {
    expect(secretParts(url)).toEqual(parts);
  });

  it("as a filter under Actions: asks the runner to mask the parts, and masks every line", () => {
    const run = spawnSync(process.execPath, [join(ROOT, "tools/github/mask.ts")], {
      input: `Connecting to ${URL}\nauthentication failed for password s3cr@t/pw\nno newline at the end: s3cr%40t%2Fpw`,
      env: { ...withoutTestEnvironment(process.env), GITHUB_ACTIONS: "true", SUPABASE_DB_PUSH_URL: URL },
      encoding: "utf8",
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      "::add-mask::s3cr%40t%2Fpw\n::add-mask::s3cr@t/pw\n" +
        "Connecting to ***\nauthentication failed for password ***\nno newline at the end: ***",
    );
  });
});
