// The watch's probe of the page's own sign-up path: with the publishable key, as the page sends a
// sign-up, an address the database's first check refuses, so that nothing is stored.
import type { SupabaseClient } from "@supabase/supabase-js";
import { DEPLOY_COMMAND } from "../supabase-cli.ts";
import { describeFailure, OwnerCommandError, TABLE, type Target } from "./failures.ts";

/**
 * What `watch` sends along the page's own path (the publishable key, as anon): an address the
 * database's check refuses (private.broken_check, supabase/schemas/10_early_access.sql) before
 * anything is stored or locked, counted as one failure of the runner's address. The refusal proves
 * the key, the insert grant and the trigger's path; a sign-up's own checks run in the same order.
 */
export const REFUSED_ADDRESS = "sign-ups watch: not an address";

/** The check that refuses it, as the database names it. */
export const REFUSED_BY = "early_access_email_check";

/** How the page's path answered: refused as it should be, or (its check missing) stored. */
export type PageAnswer = { status: number; constraint: string } | { storedId: string };

/**
 * Sends REFUSED_ADDRESS as the page sends a sign-up (insert, then read back). A refusal by the
 * database's check is the expected answer; any other failure is thrown, in words for the owner.
 */
export async function checkSignUpPath(client: SupabaseClient, target: Target): Promise<PageAnswer> {
  const answer = await client.from(TABLE).insert({ email: REFUSED_ADDRESS, phone: null }).select();
  if (!answer.error) return { storedId: (answer.data as Array<{ id: string }>)[0]!.id };
  if (
    answer.status === 400 &&
    answer.error.code === "23514" &&
    answer.error.message.includes(`"${REFUSED_BY}"`)
  )
    return { status: answer.status, constraint: REFUSED_BY };
  throw describeFailure(
    answer.error,
    answer.status,
    { ...target, role: "anon" },
    (answered) =>
      new OwnerCommandError(
        `The page's sign-up path at ${target.url} answered ${answered}, where the database should refuse the test ` +
          `address with 400 (${REFUSED_BY}): check that this repository's migrations are all applied ` +
          `(${DEPLOY_COMMAND} --dry-run lists any missing).`,
        "Page's sign-up path broken",
      ),
  );
}
