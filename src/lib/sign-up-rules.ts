// What a sign-up is, as pure functions: what counts as an email address, and how an address and
// a phone number are stored. The form, the database's checks and the owner's command agree on it.

export interface SignUp {
  email: string;
  phone: string | null;
}

/** Non-empty and containing '@'. The form adds the browser's own email check. */
export function isValidEmail(email: string): boolean {
  const trimmed = email.trim();
  return trimmed !== "" && trimmed.includes("@");
}

/**
 * An address as the database stores it, however it was typed: trimmed of every Unicode space
 * (JavaScript's trim(), as the database trims), then only A to Z lowered, as the database lowers
 * (supabase/schemas/10_early_access.sql). Not toLowerCase(): it turns some other letters into
 * ASCII ones (the Kelvin sign into k), so that `\u212Aate@example.com` would be taken for
 * `kate@example.com`, an address the database never stores for it; and its result would depend
 * on the Unicode tables of the engine that runs it.
 */
export function normalizeEmail(email: string): string {
  return email.trim().replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** Email normalised as stored; phone trimmed, and null when empty. */
export function normalizeSignUp(email: string, phone: string): SignUp {
  const trimmedPhone = phone.trim();
  return { email: normalizeEmail(email), phone: trimmedPhone === "" ? null : trimmedPhone };
}
