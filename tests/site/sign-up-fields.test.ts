// @vitest-environment jsdom
// readSignUp: what a sign-up form's own fields hold, as the island and the before-hydration
// sender read them (a simulated DOM; the browser tests use the real one).
import { describe, expect, it } from "vitest";
import { readSignUp } from "../../src/lib/sign-up-fields";

function formWith(email: string, phone: string): HTMLFormElement {
  const form = document.createElement("form");
  form.noValidate = true;
  form.innerHTML = '<input name="email" type="email" /><input name="phone" type="tel" />';
  (form.elements.namedItem("email") as HTMLInputElement).value = email;
  (form.elements.namedItem("phone") as HTMLInputElement).value = phone;
  return form;
}

describe("readSignUp", () => {
  it.each([
    // Stored as the rules say: email trimmed and lowercased, phone trimmed.
    ["  Visitor@Example.com ", " +1 555 0100 ", { email: "visitor@example.com", phone: "+1 555 0100" }],
    // No phone is null, not "".
    ["a@b.co", "   ", { email: "a@b.co", phone: null }],
    // No '@', no sign-up.
    ["future.example.com", "", null],
    // Empty.
    ["", "", null],
    // Has an '@', but the browser's own email check refuses it.
    ["a@b@c", "", null],
  ])("email %j, phone %j → %j", (email, phone, expected) => {
    expect(readSignUp(formWith(email, phone))).toEqual(expected);
  });
});
