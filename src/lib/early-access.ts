// The early-access rules of spec §3, §5 and §8 as pure functions: what counts as an email,
// what is stored, and which outcome an answer from Supabase means.

export interface SignUp {
  email: string;
  phone: string | null;
}

/** Spec §5: non-empty and containing '@'. The form adds the browser's own email check. */
export function isValidEmail(email: string): boolean {
  const trimmed = email.trim();
  return trimmed !== "" && trimmed.includes("@");
}

/** Spec §3: an address as it is stored, trimmed and lowercased, however it was typed. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Spec §3: email trimmed and lowercased; phone trimmed, and null when empty. */
export function normalizeSignUp(email: string, phone: string): SignUp {
  const trimmedPhone = phone.trim();
  return { email: normalizeEmail(email), phone: trimmedPhone === "" ? null : trimmedPhone };
}

export type Outcome = "registered" | "duplicate" | "failed";

/** Postgres' unique_violation: the address is already on the list. */
const UNIQUE_VIOLATION = "23505";

/**
 * Spec §8, from the fields supabase-js returns: `error` and `error.code`. Network failures,
 * aborts and non-JSON answers all arrive as an `error` without that code.
 */
export function outcomeOf(answer: { error: { code?: string; message: string } | null }): Outcome {
  if (!answer.error) return "registered";
  return answer.error.code === UNIQUE_VIOLATION ? "duplicate" : "failed";
}
