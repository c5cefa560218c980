// What a host must do with the build, asked over plain HTTP: `/` with 200 and every header
// `_headers` gives it, an unknown path with 404 and the build's own `404.html`, an `/_astro/` file
// with its immutable caching. The hosts' tests ask it of wrangler's local server; the deploy's
// outside checks ask the same of the live address, and may take this function's place.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { headersFor, parseHeadersFile } from "../../tools/static-host/headers-file.ts";

/** The promise: public/_headers, whatever the folder served holds. */
const PROMISED = fileURLToPath(new URL("../../public/_headers", import.meta.url));

/**
 * What `url` does wrong in serving the build `dist` (its 404.html, its /_astro/ files) with the
 * headers of public/_headers, one line each; none when it serves it as promised.
 */
export async function servedSiteProblems(url: string, dist: string): Promise<string[]> {
  const rules = parseHeadersFile(readFileSync(PROMISED, "utf8"));
  const problems: string[] = [];
  const ask = async (path: string, status: number, body?: string) => {
    const response = await fetch(new URL(path, url), { redirect: "manual" });
    const text = await response.text();
    if (response.status !== status) problems.push(`${path}: status ${response.status}, not ${status}`);
    if (body !== undefined && text !== body) problems.push(`${path}: not the build's 404.html`);
    for (const [name, value] of Object.entries(headersFor(rules, path)))
      if (response.headers.get(name) !== value)
        problems.push(
          `${path}: ${name} is ${JSON.stringify(response.headers.get(name))}, not ${JSON.stringify(value)}`,
        );
  };
  await ask("/", 200);
  await ask("/no-such-page", 404, readFileSync(join(dist, "404.html"), "utf8"));
  const astro = readdirSync(join(dist, "_astro"))[0];
  if (!astro) problems.push("the build has no /_astro/ file to ask for");
  else await ask(`/_astro/${astro}`, 200);
  return problems;
}
