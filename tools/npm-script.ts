// What an npm script runs, for tests and benches that start it themselves (with the Node that
// runs them, on ports of their own): the arguments after its leading `node`.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

export function npmScriptArgs(name: string): string[] {
  const { scripts } = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
  const [command, ...args] = scripts[name]!.split(" ");
  if (command !== "node") throw new Error(`npm run ${name} does not start with node: ${scripts[name]}`);
  return args;
}

export interface ScriptRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs an npm script to its end, as `npm run <name> -- <args>` does (in `cwd`: a copy of the
 * project, say), and what it wrote.
 * `nodeArgs` go to Node before the script's own (`--import` a module, say).
 */
export function runNpmScript(
  name: string,
  args: string[],
  {
    env = process.env,
    nodeArgs = [],
    cwd,
  }: { env?: NodeJS.ProcessEnv; nodeArgs?: string[]; cwd?: string } = {},
): Promise<ScriptRun> {
  const child = spawn(process.execPath, [...nodeArgs, ...npmScriptArgs(name), ...args], {
    cwd,
    env,
    stdio: "pipe",
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  return new Promise((resolve) => child.on("close", (status) => resolve({ status, stdout, stderr })));
}
