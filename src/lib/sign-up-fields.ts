// The sign-up a form's own fields hold, read from the browser: the island reads them on submit,
// and so does its module before React has hydrated it (src/lib/sign-up-before-hydration.ts).
import { isValidEmail, normalizeSignUp, type SignUp } from "./sign-up-rules";

/**
 * The sign-up the form's `email` and `phone` fields hold, or null when the address is not one
 * (non-empty with an '@', and the browser's own email check, without its validation bubble:
 * noValidate). Read before anything disables the fields: disabled fields are left out.
 */
export function readSignUp(form: HTMLFormElement): SignUp | null {
  const fields = new FormData(form);
  const email = String(fields.get("email") ?? "");
  const phone = String(fields.get("phone") ?? "");
  const emailInput = form.elements.namedItem("email");
  const browserAccepts = emailInput instanceof HTMLInputElement && emailInput.validity.valid;
  return isValidEmail(email) && browserAccepts ? normalizeSignUp(email, phone) : null;
}
