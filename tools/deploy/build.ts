// The deploy's build: `astro build` into `dist` with the project's address, its publishable key
// and the site's address as the build reads them (config/environment.ts, whose guards still hold:
// no secret key in a PUBLIC_ variable, no localhost in a build for a project elsewhere). The
// built page must name the project in its Content-Security-Policy, or the variables never reached
// the build: then nothing is uploaded.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { OwnerFailure } from "../../config/owner-failure.ts";
import { exited, lastLines, packageBin } from "../processes.ts";

export interface BuildSettings {
  supabaseUrl: string;
  publishableKey: string;
  siteUrl: string;
}

/** Builds the site into `dist`; its output goes to `log`. */
export async function buildSite(
  root: string,
  dist: string,
  { supabaseUrl, publishableKey, siteUrl }: BuildSettings,
  log: (chunk: string) => void,
): Promise<void> {
  const child = spawn(process.execPath, [packageBin("astro"), "build", "--outDir", dist], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: "production",
      PUBLIC_SUPABASE_URL: supabaseUrl,
      PUBLIC_SUPABASE_PUBLISHABLE_KEY: publishableKey,
      SITE_URL: siteUrl,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  for (const stream of [child.stdout, child.stderr])
    stream.setEncoding("utf8").on("data", (chunk: string) => ((output += chunk), log(chunk)));
  if ((await exited(child)) !== 0)
    throw new OwnerFailure(
      `The build failed, so nothing was uploaded: ${lastLines(output, 3).join(" ")}`,
      "Build failed",
    );
  const page = readFileSync(join(dist, "index.html"), "utf8");
  if (!page.includes(new URL(supabaseUrl).origin))
    throw new OwnerFailure(
      `The build in ${dist} does not send sign-ups to ${new URL(supabaseUrl).origin}: PUBLIC_SUPABASE_URL did not ` +
        "reach it. Nothing was uploaded; build again (an astro.config.mjs that no longer reads config/environment.ts?).",
      "Build on another project",
    );
}
