// The database accepts exactly the addresses the form's email field accepts: the browser's own
// type=email check decides in Chromium, and the same address, normalised as the form sends it,
// is then offered to the database through the REST API. Any disagreement is a bug on one side.
import { LOCAL_PUBLISHABLE_KEY } from "../../../config/local-supabase.ts";
import { normalizeSignUp } from "../../../src/lib/sign-up-rules.ts";
import { content } from "../../support/content.ts";
import { API_URL, expect, openLanding, test } from "./support.ts";

const copy = content.form;

// Each candidate is built around a fresh tag, so that accepted ones never collide.
const CANDIDATES: Array<[description: string, address: (tag: string) => string]> = [
  ["plain", (tag) => `${tag}@example.com`],
  ["dots, a tag and subdomains", (tag) => `${tag}.first.last+news@mail.example.co.uk`],
  ["a domain without a dot", (tag) => `${tag}@localhost`],
  ["every symbol the grammar allows", (tag) => `${tag}!#$%&'*+/=?^_\`{|}~-@example.com`],
  ["a leading dot and two dots in a row", (tag) => `.${tag}..x@example.com`],
  ["a hyphen inside a label", (tag) => `${tag}@a-b.example`],
  ["capitals and surrounding spaces", (tag) => `  ${tag.toUpperCase()}@Example.COM  `],
  ["a non-ASCII domain", (tag) => `${tag}@bücher.example`],
  ["no @", (tag) => tag],
  ["only an @", () => "@"],
  ["nothing after the @", (tag) => `${tag}@`],
  ["nothing before the @", () => "@example.com"],
  ["two @", (tag) => `${tag}@@example.com`],
  ["an inner space", (tag) => `${tag} x@example.com`],
  ["a label starting with a hyphen", (tag) => `${tag}@-example.com`],
  ["a label ending with a hyphen", (tag) => `${tag}@example-.com`],
  ["an empty label", (tag) => `${tag}@example..com`],
  ["an underscore in the domain", (tag) => `${tag}@exa_mple.com`],
  ["a quoted local part", (tag) => `"${tag}"@example.com`],
  ["an address literal", (tag) => `${tag}@[192.0.2.1]`],
  ["a non-ASCII local part", (tag) => `jürgen${tag}@example.com`],
  ["a zero-width space", (tag) => `${tag}\u200b@example.com`],
  ["a label of 64 characters", (tag) => `${tag}@${"d".repeat(64)}.com`],
];

test("the database and the browser's email field agree on every address", async ({ page }) => {
  await openLanding(page);
  const field = page.getByLabel(copy.emailLabel);

  const disagreements: string[] = [];
  for (const [description, address] of CANDIDATES) {
    const typed = address(`grammar-${crypto.randomUUID().slice(0, 8)}`);
    await field.fill(typed);
    const { valid, value } = await field.evaluate((input: HTMLInputElement) => ({
      valid: input.validity.valid,
      value: input.value,
    }));
    const response = await fetch(`${API_URL}/rest/v1/early_access`, {
      method: "POST",
      headers: { apikey: LOCAL_PUBLISHABLE_KEY, "content-type": "application/json" },
      body: JSON.stringify({ email: normalizeSignUp(value, "").email }),
    });
    const stored = response.status === 201;
    if (stored !== valid) {
      disagreements.push(
        `${description} (${JSON.stringify(typed)} → ${JSON.stringify(value)}): ` +
          `browser ${valid ? "accepts" : "refuses"}, database answers ${response.status}`,
      );
    }
  }
  expect(disagreements, disagreements.join("\n")).toEqual([]);
});
