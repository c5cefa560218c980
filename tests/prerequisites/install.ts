// Before any test: find Chromium, nginx and openssl, or install them (tests/prerequisites/plan.ts
// decides how), one line each. Where they cannot be had (no network, no root for the system's
// libraries), the run stops within 30 s, before any test, with one line naming the command to run.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { findChromium } from "../../tools/chromium.ts";
import { findProgram } from "../hosting/nginx-server.ts";
import { commandFor, plan, type Machine, type Needs, type Step } from "./plan.ts";

/**
 * From the run's start, how long a step may take to show that it can get what it installs
 * (apt-get's index downloaded, Playwright's download begun): past it, the run stops, within the
 * 30 s a newcomer waits before the first test.
 */
const PROOF_MS = 25_000;
/** A whole install, once it has shown it can reach its packages. */
const INSTALL_MS = 15 * 60_000;

/** The machine as it is now. */
export function lookAtMachine(): Machine {
  const osRelease = existsSync("/etc/os-release") ? readFileSync("/etc/os-release", "utf8") : "";
  const chromium = findChromium();
  return {
    platform: process.platform,
    root: process.getuid?.() === 0,
    apt: process.platform === "linux" && findProgram("apt-get") !== null,
    ubuntu: /^ID="?ubuntu"?$/m.test(osRelease),
    chromium: chromium.path,
    chromiumLacksLibraries: chromium.lacksLibraries,
    nginx: findProgram("nginx") !== null,
    openssl: findProgram("openssl") !== null,
    ci: Boolean(process.env.CI),
  };
}

interface Outcome {
  ok: boolean;
  /** The end of what it printed, for the line that stops the run. */
  output: string;
}

/**
 * Runs a command quietly. `proof` says from its output whether it has reached what it fetches;
 * until it has, it must finish or prove so by `proofBy` (a time from performance.now()), or it is
 * stopped.
 */
function runQuietly(
  command: string,
  args: string[],
  { proofBy, proof, env }: { proofBy: number; proof?: (output: string) => boolean; env?: NodeJS.ProcessEnv },
): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    });
    let output = "";
    let proven = false;
    let timedOut = "";
    const stop = (why: string) => {
      timedOut = why;
      child.kill("SIGKILL");
    };
    const read = (chunk: Buffer) => {
      output = (output + chunk).slice(-4000);
      if (!proven && proof?.(output)) {
        proven = true;
        clearTimeout(proofTimer);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    const proofTimer =
      proofBy === Infinity
        ? undefined
        : setTimeout(
            () => stop(`no answer from the network in ${Math.round(PROOF_MS / 1000)} s`),
            Math.max(0, proofBy - performance.now()),
          );
    const wholeTimer = setTimeout(() => stop(`still running after ${INSTALL_MS / 60_000} min`), INSTALL_MS);
    child.on("error", (error) => (output += String(error)));
    child.on("close", (status) => {
      clearTimeout(proofTimer);
      clearTimeout(wholeTimer);
      resolve({ ok: status === 0 && !timedOut, output: timedOut || output });
    });
  });
}

/** The last line of a command's output that says what went wrong. */
function reason(output: string): string {
  const lines = output
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  return (lines.find((line) => /^(E:|Err:|Error|error)/.test(line)) ?? lines.at(-1) ?? "it failed")
    .replace(/\s+/g, " ")
    .slice(0, 200);
}

async function runStep(step: Step, proofBy: number): Promise<Outcome> {
  if (step.kind === "apt") {
    const env = { DEBIAN_FRONTEND: "noninteractive" };
    // The index first, failing on any mirror it cannot reach (apt-get's own default only warns).
    const options = ["-qq", "-o", "Acquire::Retries=0", "-o", "Acquire::http::Timeout=10"];
    const update = await runQuietly("apt-get", ["update", "--error-on=any", ...options], { proofBy, env });
    if (!update.ok) return update;
    // Once the mirrors answered, the download may take what it takes.
    return runQuietly(
      "apt-get",
      ["install", "-y", ...options, "-o", "DPkg::Lock::Timeout=120", ...step.packages.map(available)],
      { proofBy: Infinity, env },
    );
  }
  return runQuietly(
    process.execPath,
    [
      new URL("../../node_modules/playwright/cli.js", import.meta.url).pathname,
      "install",
      ...(step.withDeps ? ["--with-deps"] : []),
      "chromium",
    ],
    // Its progress bar, once the download has begun.
    { proofBy, proof: (output) => /\d+% of /.test(output) },
  );
}

/**
 * The package apt-get can install for `name`: nginx-light where the release has it (Debian 12,
 * Ubuntu), else plain nginx, which is the light one where nginx-light is gone (Debian 13).
 */
function available(name: string): string {
  if (name !== "nginx-light") return name;
  const { stdout } = spawnSync("apt-cache", ["policy", name], { encoding: "utf8" });
  return /Candidate: (?!\(none\))/.test(stdout ?? "") ? name : "nginx";
}

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/**
 * Finds or installs what the run's tests need, printing one line each; returns the line that
 * stops the run, or null when it may go on.
 */
export async function ensurePrerequisites(needs: Needs): Promise<string | null> {
  const started = performance.now();
  const before = plan(lookAtMachine(), needs);
  for (const line of before.found) console.log(`✔ ${line}`);
  if (before.stop) return before.stop;

  for (const step of before.steps) {
    const what = step.kind === "apt" ? `${step.packages.join(" ")} with apt-get` : `Chromium with Playwright`;
    console.log(`⬇ Installing ${what} (once: it stays installed)…`);
    const stepStarted = performance.now();
    const outcome = await runStep(step, started + PROOF_MS);
    if (!outcome.ok)
      return `Could not install ${what} (${reason(outcome.output)}): run \`${commandFor(step)}\``;
    console.log(`✔ Installed ${what} in ${seconds(performance.now() - stepStarted)}`);
  }

  // What the steps installed, found as the tests will find it.
  const after = plan(lookAtMachine(), needs);
  if (before.steps.length) {
    if (after.steps.length)
      return `Installed, yet still missing (${after.steps.map(commandFor).join("; ")}): run \`${commandFor(after.steps[0]!)}\``;
    for (const line of after.found.filter((line) => !before.found.includes(line))) console.log(`✔ ${line}`);
  }
  for (const line of after.without) console.log(`⚠ ${line}`);
  return after.stop;
}

/** For a run by hand: `node tests/prerequisites/install.ts`. */
if (import.meta.main) {
  const stop = await ensurePrerequisites({ chromium: true, nginx: true });
  if (stop) console.error(`✖ ${stop}`);
  process.exit(stop ? 1 : 0);
}
