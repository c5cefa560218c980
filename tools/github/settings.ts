// `node tools/github/settings.ts <job> NAME… [--needs NAME…]`, the first step of each automatic job
// of .github/workflows/: whether the job's settings (secrets and variables, given to the step's
// environment) are set. A copy of this template that nobody has set up yet must stay quiet, as
// GitHub mails every failed scheduled run: with none of the NAMEs that turn the job on, the step
// ends green with a notice saying what to set. With some of them, or without what they --needs
// besides (settings other jobs share), it fails naming what is missing. Its output `<job>` is
// `true` when all are set, and the job's later steps run on it.
//
// Runs before the install, on Node alone: it imports nothing but node: and this folder.
import { appendFileSync } from "node:fs";
import { report } from "./annotations.ts";

/** What a job's settings make of it: ready, off (none of its own set), or short of some. */
type Settings =
  { state: "ready" } | { state: "off"; unset: string[] } | { state: "incomplete"; missing: string[] };

/** `own` turn the job on; `needs` are what it then needs besides. */
function readSettings(env: NodeJS.ProcessEnv, own: string[], needs: string[] = []): Settings {
  const set = (name: string) => Boolean(env[name]);
  if (!own.some(set)) return { state: "off", unset: own };
  const missing = [...own, ...needs].filter((name) => !set(name));
  return missing.length === 0 ? { state: "ready" } : { state: "incomplete", missing };
}

/** `A`, `A and B`, `A, B and C` */
const listed = (names: string[]) =>
  names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;

const WHERE = "in the repository's Settings → Secrets and variables → Actions";

/** What to tell the owner of `job` (`watch`): a notice when it is off, an error when it is short. */
function settingsMessage(
  job: string,
  settings: Settings,
): { kind: "notice" | "error"; title: string; message: string } | null {
  const name = job[0]!.toUpperCase() + job.slice(1);
  if (settings.state === "off")
    return {
      kind: "notice",
      title: `${name} not set up`,
      message: `Set ${listed(settings.unset)} ${WHERE} to turn it on (README: GitHub's jobs).`,
    };
  if (settings.state === "incomplete") {
    const them = settings.missing.length === 1 ? "it" : "them";
    return {
      kind: "error",
      title: `${name} missing settings`,
      message: `Some of its settings are set, not ${listed(settings.missing)}: set ${them} ${WHERE} (README: GitHub's jobs).`,
    };
  }
  return null;
}

if (import.meta.main) {
  const [job, ...names] = process.argv.slice(2);
  const split = names.indexOf("--needs");
  const own = split < 0 ? names : names.slice(0, split);
  const needs = split < 0 ? [] : names.slice(split + 1);
  if (!job || own.length === 0) {
    process.stderr.write("usage: node tools/github/settings.ts <job> NAME… [--needs NAME…]\n");
    process.exit(2);
  }
  const settings = readSettings(process.env, own, needs);
  if (process.env.GITHUB_OUTPUT)
    appendFileSync(process.env.GITHUB_OUTPUT, `${job}=${settings.state === "ready"}\n`);
  const said = settingsMessage(job, settings);
  if (said) report(said.kind, said.message, said.title);
  if (said?.kind === "error") process.exitCode = 1;
}
