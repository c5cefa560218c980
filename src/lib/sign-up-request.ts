// The sign-up's one request: insert it into `early_access` and read the row back, within a time
// limit so that the form never stays in its loading state, and what Supabase's answer means for
// the visitor.
import type { SupabaseClient } from "@supabase/supabase-js";
import type { SignUp } from "./sign-up-rules";

export type Outcome = "registered" | "duplicate" | "failed";

const REQUEST_TIMEOUT_MS = 15_000;

/** Postgres' unique_violation: the address is already on the list. */
const UNIQUE_VIOLATION = "23505";

/**
 * The outcome, from the fields supabase-js returns: `error` and `error.code`. Network failures,
 * aborts and non-JSON answers all arrive as an `error` without that code.
 */
export function outcomeOf(answer: { error: { code?: string; message: string } | null }): Outcome {
  if (!answer.error) return "registered";
  return answer.error.code === UNIQUE_VIOLATION ? "duplicate" : "failed";
}

export async function register(loadClient: () => Promise<SupabaseClient>, signUp: SignUp): Promise<Outcome> {
  // A timer (not AbortSignal.timeout) so that a faked clock in tests can trigger it.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), REQUEST_TIMEOUT_MS);
  try {
    const client = await loadClient();
    const answer = await client.from("early_access").insert(signUp).select().abortSignal(controller.signal);
    return outcomeOf(answer);
  } catch {
    // supabase-js returns rather than throws for HTTP and network errors; anything thrown
    // (the client itself failing to download, say) is still a failed registration.
    return "failed";
  } finally {
    clearTimeout(timer);
  }
}
