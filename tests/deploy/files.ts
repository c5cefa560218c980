// The files of a build as a host names them: `/` and the path from the build's folder, sorted.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export function filesOf(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: "utf8" })
    .filter((file) => statSync(join(folder, file)).isFile())
    .map((file) => `/${file.split("\\").join("/")}`)
    .sort();
}
