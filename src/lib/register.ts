// Spec §7: insert the sign-up into `early_access` and read the row back, within a time limit,
// so the form never stays in its loading state.
import type { SupabaseClient } from "@supabase/supabase-js";
import { outcomeOf, type Outcome, type SignUp } from "./early-access";

export const REQUEST_TIMEOUT_MS = 15_000;

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
    // (supabase-js itself failing to download, say) is still a failed registration.
    return "failed";
  } finally {
    clearTimeout(timer);
  }
}
