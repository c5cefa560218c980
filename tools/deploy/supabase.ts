// The deploy's Supabase project beyond its migrations (migrations.ts): the publishable key fetched
// with an access token (the pinned CLI's `projects api-keys`), refused where a secret key stands in
// its place, and the page's sign-up path tried as the watch tries it (tools/sign-ups/probe.ts): an
// address the database refuses, so that nothing is stored.
import { createClient } from "@supabase/supabase-js";
import { isSecretKey } from "../../config/environment.ts";
import { OwnerFailure } from "../../config/owner-failure.ts";
import { checkSignUpPath, REFUSED_ADDRESS } from "../sign-ups/probe.ts";
import { runPinned } from "../npx.ts";
import { lastLines } from "../processes.ts";
import { SUPABASE_CLI } from "../supabase-cli.ts";

/**
 * The project's publishable key, fetched with the owner's access token (SUPABASE_ACCESS_TOKEN in
 * `env`) by the CLI's `projects api-keys`: the one whose type is `publishable`.
 */
export async function fetchPublishableKey(
  root: string,
  ref: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const { status, stdout, stderr } = await runPinned(
    SUPABASE_CLI,
    ["projects", "api-keys", `--remote=${ref}`, "-o", "json"],
    {
      cwd: root,
      env,
    },
  );
  let keys: Array<{ api_key?: string; type?: string }> = [];
  try {
    if (status === 0) keys = JSON.parse(stdout);
  } catch {
    // Said below, as any other failure.
  }
  const key = keys.find((entry) => entry.type === "publishable")?.api_key;
  if (key) return key;
  const why = lastLines(`${stdout}\n${stderr}`, 2).join(" ");
  throw new OwnerFailure(
    `Could not fetch the publishable key of project ${ref} with SUPABASE_ACCESS_TOKEN (${why || "no publishable key"}). ` +
      "Check the token (supabase.com/dashboard/account/tokens) and the project's ref (Project Settings → General), " +
      "or set PUBLIC_SUPABASE_PUBLISHABLE_KEY (Project Settings → API Keys → Publishable key).",
    "Publishable key not fetched",
  );
}

/** Why a publishable key is refused: a secret key would be built into every page. */
export function refusePublishableKey(key: string): string | null {
  return isSecretKey(key)
    ? "this is a secret key, which would be built into every page: give the publishable key (sb_publishable_…)."
    : null;
}

/**
 * Tries the page's sign-up path with the publishable key, as the watch does; throws, in words for
 * the owner, unless the database refuses the test address as it must.
 */
export async function checkPagePath(url: string, key: string): Promise<void> {
  const client = createClient(url, key, { auth: { persistSession: false, autoRefreshToken: false } });
  const target = { url, keySource: "PUBLIC_SUPABASE_PUBLISHABLE_KEY", role: "anon" as const };
  const answer = await checkSignUpPath(client, target);
  if ("storedId" in answer)
    throw new OwnerFailure(
      `The page's sign-up path at ${url} stored "${REFUSED_ADDRESS}", which the database must refuse: its check ` +
        "(private.broken_check) is missing. Apply this repository's migrations, then remove the row " +
        `(npm run sign-ups -- list shows it; its id is ${answer.storedId}).`,
      "Page's sign-up check missing",
    );
}
