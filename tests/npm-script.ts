// What an npm script runs, for tests and benches that start it themselves (with the Node that
// runs them, on ports of their own): the arguments after its leading `node`.
import { readFileSync } from "node:fs";

export function npmScriptArgs(name: string): string[] {
  const { scripts } = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
  const [command, ...args] = scripts[name]!.split(" ");
  if (command !== "node") throw new Error(`npm run ${name} does not start with node: ${scripts[name]}`);
  return args;
}
