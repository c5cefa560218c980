// The tests leave a developer's running site alone. A copy of the project gets a `.env` that
// moves every port, as the README shows, and `npm start` runs there as a developer would run it
// (its first start: no build yet). Then the copy's own browser tests and build-reading tests run
// beside it, as `npm test -- <files>` runs them (one build of its own for both). The running
// instance must keep its sign-ups and its build exactly as they were, and keep answering; the
// tests must pass.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePorts } from "../../tools/processes.ts";
import { listedEmails, signUpOverHttp } from "../support/database.ts";
import { npmScriptArgs } from "../../tools/npm-script.ts";
import { copyProject } from "../support/project-copy.ts";
import { withoutTestEnvironment } from "../test-environment.ts";

const copy = copyProject("future-awaits-bystander-");
const [sitePort, apiPort] = freePorts(2) as [number, number];
const site = `http://127.0.0.1:${sitePort}`;
const api = `http://127.0.0.1:${apiPort}`;

/** What the developer's own commands see: no test settings, only the copy's `.env`. */
const developerEnv = { ...withoutTestEnvironment(process.env), NODE_ENV: "production" };

let stopInstance: () => Promise<void>;

beforeAll(async () => {
  // The README's way of moving everything: PORT and SUPABASE_API_PORT (the build follows it).
  writeFileSync(join(copy, ".env"), `PORT=${sitePort}\nSUPABASE_API_PORT=${apiPort}\n`);

  const instance = spawn(process.execPath, npmScriptArgs("start"), {
    cwd: copy,
    env: developerEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise((resolve) => instance.on("exit", resolve));
  await new Promise<void>((ready, failed) => {
    const read = (chunk: Buffer) => (output += chunk) && output.includes("Site:") && ready();
    instance.stdout.on("data", read);
    instance.stderr.on("data", read);
    void exited.then(() => failed(new Error(`npm start exited:\n${output}`)));
  });
  stopInstance = async () => {
    instance.kill("SIGINT");
    await exited;
  };
}, 180_000);

afterAll(async () => {
  await stopInstance?.();
  rmSync(copy, { recursive: true, force: true });
});

const storedEmails = async () => (await listedEmails({ url: api })).sort();

/** Every file of the instance's build, with a hash of its content. */
function buildFingerprint(): Record<string, string> {
  const dist = join(copy, "dist");
  return Object.fromEntries(
    readdirSync(dist, { recursive: true, encoding: "utf8" })
      .sort()
      .flatMap((file) => {
        try {
          return [
            [
              file,
              createHash("sha256")
                .update(readFileSync(join(dist, file)))
                .digest("hex"),
            ],
          ];
        } catch {
          return []; // a folder
        }
      }),
  );
}

/**
 * Runs one of the copy's test commands as a developer would, beside the running instance (in
 * the background: this process keeps talking to the instance meanwhile).
 */
async function runInCopy(args: string[]): Promise<{ status: number | null; output: string }> {
  const child = spawn(process.execPath, args, { cwd: copy, env: { ...developerEnv, CI: "" } });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk));
  const status = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  return { status, output };
}

it("a first `npm start` serves its own build, with the security headers, on the ports .env gives", async () => {
  const response = await fetch(site);
  expect(response.status).toBe(200);
  expect(response.headers.get("x-frame-options")).toBe("DENY");
  // Only SUPABASE_API_PORT was moved: the build sends sign-ups there, and its CSP allows that.
  expect(await response.text()).toContain(`connect-src 'self' ${api}`);
});

it("the browser tests and the build's tests pass beside it, and leave its sign-ups and build untouched", async () => {
  expect((await signUpOverHttp({ url: api }, `developer-${Date.now()}@example.com`)).status).toBe(201);
  const emails = await storedEmails();
  const build = buildFingerprint();

  // Browser tests that sign up (a success and a real duplicate) and build-reading tests.
  const tests = await runInCopy([
    ...npmScriptArgs("test"),
    "tests/site/browser/csp.spec.ts",
    "tests/site/build/size.test.ts",
  ]);
  expect(tests.status, tests.output).toBe(0);
  // Both ran, and passed: the browser's file and the build's.
  expect(tests.output, tests.output).toMatch(/^[1-9]\d* passed, 0 failed, 0 skipped$/m);
  expect(tests.output).toMatch(/csp\.spec\.ts/);
  expect(tests.output).toMatch(/size\.test\.ts/);

  expect(await storedEmails()).toEqual(emails);
  expect(buildFingerprint()).toEqual(build);
  expect((await fetch(site)).status).toBe(200);
}, 480_000);
