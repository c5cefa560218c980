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

/** An address as it is stored, trimmed and lowercased, however it was typed. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Email trimmed and lowercased; phone trimmed, and null when empty. */
export function normalizeSignUp(email: string, phone: string): SignUp {
  const trimmedPhone = phone.trim();
  return { email: normalizeEmail(email), phone: trimmedPhone === "" ? null : trimmedPhone };
}
