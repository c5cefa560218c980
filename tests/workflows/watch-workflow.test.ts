// The daily watch (.github/workflows/watch.yml): its own steps after the install, run with bash as
// the runner runs them, with the secrets and the variable pointing at a project: a local Supabase
// started here, standing in for the live one (the endpoint logged in as authenticator, as in
// tests/sign-ups/owner-command.test.ts), and a server answering as a paused project does.
//
// The two tests named "with the watch verb" run `npm run sign-ups -- watch`, the owner's command's
// verb that reads the list with the secret key, asks the page's path with the publishable key,
// storing nothing, fails with one line when the project does not answer, and appends a summary to
// $GITHUB_STEP_SUMMARY. Until tools/sign-ups/cli.ts has that verb, they fail.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../tools/local-supabase/database/database.ts";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { withoutTestEnvironment } from "../test-environment.ts";
import { openTestDatabase, signUpOverHttp } from "../support/database.ts";
import { readWorkflow, runSteps, stepsAfter } from "./workflow.ts";

const workflow = readWorkflow("watch.yml");
const job = workflow.jobs.watch!;
const steps = stepsAfter(job, "install");

const root = mkdtempSync(join(tmpdir(), "watch-workflow-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * The runner's environment: none of the project's settings but those the workflow's steps set, so
 * that a developer's .env counts for nothing (empty is unset, and wins over .env).
 */
const baseEnv = {
  ...withoutTestEnvironment(process.env),
  PUBLIC_SUPABASE_URL: "",
  PUBLIC_SUPABASE_PUBLISHABLE_KEY: "",
  SUPABASE_SECRET_KEY: "",
  SUPABASE_API_PORT: "",
  SUPABASE_DATA_DIR: join(root, "untouched"),
  SUPABASE_DB_URL: "",
  SUPABASE_SEED_FILE: "",
  SIGN_UPS_NOW: "",
  TZ: "UTC",
};

/** The repository's secrets and variable as the README tells the owner to set them. */
const projectAt = (url: string, backend: LocalSupabase) => ({
  secrets: { PUBLIC_SUPABASE_URL: url, SUPABASE_SECRET_KEY: backend.secretKey },
  vars: { PUBLIC_SUPABASE_PUBLISHABLE_KEY: backend.publishableKey },
});

describe("the watch's workflow", () => {
  it("runs every day, and on demand", () => {
    expect(workflow.on).toEqual({
      schedule: [{ cron: expect.stringMatching(/^\d+ \d+ \* \* \*$/) }],
      workflow_dispatch: null,
    });
  });

  it("runs the owner's command after the install", () => {
    expect(steps.map((step) => step.run?.trim().split("\n").at(-1))).toEqual(["npm run sign-ups -- watch"]);
  });

  it.each([
    { case: "none set", set: [] as string[] },
    { case: "the publishable key missing", set: ["PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY"] },
  ])("without its settings ($case): fails, naming what to set, and watches nothing", async ({ set }) => {
    const secrets = Object.fromEntries(set.map((name) => [name, "set"]));
    const run = await runSteps(steps, { baseEnv, context: { secrets } });
    expect(run.status, run.output).toBe(1);
    const missing = ["PUBLIC_SUPABASE_URL", "SUPABASE_SECRET_KEY", "PUBLIC_SUPABASE_PUBLISHABLE_KEY"].filter(
      (name) => !set.includes(name),
    );
    expect(run.output).toBe(
      `::error::Set ${missing.join(" ")} in the repository's Settings → Secrets and variables → Actions (README: GitHub's jobs).\n`,
    );
  });

  describe("against a project", () => {
    let backend: LocalSupabase;
    let owner: Database;
    /** Five sign-ups, one from a disposable domain, which the owner's command marks for review. */
    const SIGN_UPS = ["ada", "bob", "cy", "dee"]
      .map((name) => `${name}@example.com`)
      .concat("eve@mailinator.com");
    beforeAll(async () => {
      let database: Database;
      ({ database, owner } = await openTestDatabase());
      backend = await startLocalSupabase({ database, port: 0, log: () => {} });
      for (const email of SIGN_UPS) expect((await signUpOverHttp(backend, email)).status).toBe(201);
    });
    afterAll(() => backend?.close());

    const stored = async () =>
      (await owner.query<{ n: number }>("select count(*)::integer as n from public.early_access")).rows[0]!.n;

    it("with the watch verb: passes, stores nothing, and sums the list up for the run's page", async () => {
      // "localhost": a project elsewhere, not the local Supabase the command would otherwise start.
      const url = backend.url.replace("127.0.0.1", "localhost");
      const run = await runSteps(steps, { baseEnv, context: projectAt(url, backend) });
      expect(run.status, run.output).toBe(0);
      expect(await stored()).toBe(SIGN_UPS.length);
      const lines = run.summary.split("\n");
      expect(run.summary, "the summary: how many in all").toSatisfy(() =>
        lines.some((line) => /in all/i.test(line) && /\b5\b/.test(line)),
      );
      expect(run.summary, "the summary: how many marked, per reason").toSatisfy(() =>
        lines.some((line) => /disposable/i.test(line) && /\b1\b/.test(line)),
      );
    });

    it("with the watch verb: a paused project fails the run, named as paused", async () => {
      // Supabase answers every request to a paused project with its own status, 540.
      const paused = createServer((_, response) => response.writeHead(540).end("Project paused"));
      await new Promise<void>((listening) => paused.listen(0, "127.0.0.1", listening));
      try {
        const url = `http://localhost:${(paused.address() as AddressInfo).port}`;
        const run = await runSteps(steps, { baseEnv, context: projectAt(url, backend) });
        expect(run.status, run.output).not.toBe(0);
        expect(run.output).toMatch(/paused/i);
      } finally {
        await new Promise((closed) => paused.close(closed));
      }
    });
  });
});
