// The sign-up form (its states, validation, request and every outcome) against the production build and the embedded
// backend. Real failures where they can be had (a real duplicate); network faults and a hang
// are faked with page.route because they cannot be produced on demand.
import type { Page } from "@playwright/test";
import { createRequire } from "node:module";
import { content } from "../../support/content.ts";
import {
  countRestCalls,
  expect,
  openLanding,
  screenshot,
  signUpForm,
  storedRows,
  test,
  toast,
  uniqueEmail,
} from "./support.ts";

const copy = content.form;

const SUPABASE_JS_VERSION = (
  createRequire(import.meta.url)("@supabase/supabase-js/package.json") as { version: string }
).version;

const REST = "**/rest/v1/early_access*";

test("a sign-up shows loading, then the success panel, and is stored normalised", async ({
  page,
}, testInfo) => {
  const email = uniqueEmail(testInfo);
  const inserts = countRestCalls(page);
  await openLanding(page);
  const f = signUpForm(page);

  // Hold the request until the loading state has been checked, then let it through untouched.
  const release = Promise.withResolvers<void>();
  let clientInfo: string | null = null;
  await page.route(REST, async (route) => {
    if (route.request().method() === "POST") {
      clientInfo = await route.request().headerValue("x-client-info");
      await release.promise;
    }
    await route.continue();
  });

  await f.email.fill(`  ${email.toUpperCase()}  `);
  await f.phone.fill("  +44 20 7946 0000 ");
  await f.button.click();

  await expect(f.button).toHaveText(copy.submitting);
  await expect(f.button).toBeDisabled();
  await expect(f.email).toBeDisabled();
  await expect(f.phone).toBeDisabled();
  await screenshot(page, testInfo, "form-loading");
  release.resolve();

  await expect(page.getByRole("heading", { name: copy.success.title })).toBeVisible();
  await expect(page.getByText(copy.success.message, { exact: true })).toBeVisible();
  await expect(page.getByLabel(copy.emailLabel)).toHaveCount(0);
  const success = toast(page, copy.toasts.registered.title);
  await expect(success).toContainText(copy.toasts.registered.description);
  await expect(success).toHaveAttribute("data-type", "success");
  await screenshot(page, testInfo, "form-success");

  expect(inserts.inserts).toBe(1);
  expect(await storedRows(email)).toEqual([{ email, phone: "+44 20 7946 0000" }]);
  // Sent by supabase-js itself, the version installed, in a browser.
  expect(clientInfo).toBe(`supabase-js/${SUPABASE_JS_VERSION}; platform=browser`);
});

test("an empty phone is stored as null", async ({ page }, testInfo) => {
  const email = uniqueEmail(testInfo);
  await openLanding(page);
  await signUpForm(page).email.fill(email);
  await signUpForm(page).phone.fill("   ");
  await signUpForm(page).button.click();
  await expect(page.getByRole("heading", { name: copy.success.title })).toBeVisible();
  expect(await storedRows(email)).toEqual([{ email, phone: null }]);
});

test("an address already on the list is refused, and typing clears the error", async ({ page }, testInfo) => {
  const email = uniqueEmail(testInfo);
  await openLanding(page);
  await signUpForm(page).email.fill(email);
  await signUpForm(page).button.click();
  await expect(page.getByRole("heading", { name: copy.success.title })).toBeVisible();

  // The same address again, in another case and with spaces: the database says 23505.
  await openLanding(page);
  const f = signUpForm(page);
  await f.email.fill(` ${email.toUpperCase()} `);
  await f.button.click();
  await expect(f.message).toHaveText(copy.errors.duplicate);
  await expect(f.email).toHaveAttribute("aria-invalid", "true");
  const duplicate = toast(page, copy.toasts.duplicate.title);
  await expect(duplicate).toContainText(copy.toasts.duplicate.description);
  await expect(duplicate).toHaveAttribute("data-type", "error");
  await expect(f.status).toHaveText(copy.errors.duplicate);
  await screenshot(page, testInfo, "form-duplicate");

  await f.email.press("End");
  await f.email.pressSequentially("x");
  await expect(f.message).toHaveCount(0);
  await expect(f.email).toHaveAttribute("aria-invalid", "false");
  await expect(f.button).toHaveText(copy.submit);
  expect(await storedRows(email)).toHaveLength(1);
});

for (const [name, typed] of [
  ["an empty address", ""],
  ["an address without @", "future.example.com"],
  ["an address the browser rejects", "someone@"],
] as const) {
  test(`${name} is refused before anything is sent`, async ({ page }, testInfo) => {
    const inserts = countRestCalls(page);
    await openLanding(page);
    const f = signUpForm(page);
    await f.email.fill(typed);
    await f.button.click();
    await expect(f.message).toHaveText(copy.errors.invalid);
    await expect(f.email).toHaveAttribute("aria-invalid", "true");
    await expect(f.email).toBeFocused();
    // The spec's message, not the browser's own validation bubble.
    expect(await f.email.evaluate((input) => input.closest("form")!.noValidate)).toBe(true);
    await expect(page.locator("[data-sonner-toast]")).toHaveCount(0);
    if (!typed) await screenshot(page, testInfo, "form-invalid");
    expect(inserts.inserts).toBe(0);
  });
}

const failures: Array<[string, (page: Page) => Promise<unknown>]> = [
  // The network is down: the request fails before any answer.
  ["the network fails", (page) => page.route(REST, (route) => route.abort("internetdisconnected"))],
  // A proxy answers with an HTML error page instead of JSON.
  [
    "the answer is not JSON",
    (page) =>
      page.route(REST, (route) =>
        route.request().method() === "POST"
          ? route.fulfill({
              status: 502,
              contentType: "text/html",
              body: "<html><h1>502 Bad Gateway</h1></html>",
            })
          : route.continue(),
      ),
  ],
];

for (const [name, breakNetwork] of failures) {
  test(`when ${name}, the form says something went wrong`, async ({ page }, testInfo) => {
    await openLanding(page);
    await breakNetwork(page);
    const f = signUpForm(page);
    await f.email.fill(uniqueEmail(testInfo));
    await f.button.click();
    await expect(f.message).toHaveText(copy.errors.failed);
    const failed = toast(page, copy.toasts.failed.title);
    await expect(failed).toContainText(copy.toasts.failed.description);
    await expect(failed).toHaveAttribute("data-type", "error");
    await expect(f.button).toBeEnabled();
    if (name === "the network fails") await screenshot(page, testInfo, "form-failed");
  });
}

test("a request without an answer is given up after 15 seconds", async ({ page }, testInfo) => {
  // The clock is faked so the test need not wait 15 real seconds; the hang is faked by a
  // route that never answers.
  await page.clock.install();
  await openLanding(page);
  // From here the page's clock moves only when the test moves it: the real seconds a busy
  // machine takes between the click and the next step must not count toward the 15.
  await page.clock.pauseAt(await page.evaluate(() => Date.now() + 2_000));
  await page.route(REST, (route) => (route.request().method() === "POST" ? undefined : route.continue()));
  const f = signUpForm(page);
  await f.email.fill(uniqueEmail(testInfo));
  await f.button.click();
  await expect(f.button).toHaveText(copy.submitting);

  await page.clock.runFor(14_000);
  await expect(f.button).toHaveText(copy.submitting);
  await page.clock.runFor(1_000);
  await expect(f.message).toHaveText(copy.errors.failed);
  await expect(f.button).toHaveText(copy.submit);
});

test("a double submission sends one request", async ({ page }, testInfo) => {
  const inserts = countRestCalls(page);
  await openLanding(page);
  const release = Promise.withResolvers<void>();
  await page.route(REST, async (route) => {
    if (route.request().method() === "POST") await release.promise;
    await route.continue();
  });
  const f = signUpForm(page);
  await f.email.fill(uniqueEmail(testInfo));
  // Two submits in the same task, before React can re-render; then, while the first request
  // is pending, a double click and Enter.
  await f.email.evaluate((input) => {
    const formElement = input.closest("form")!;
    formElement.requestSubmit();
    formElement.requestSubmit();
  });
  await f.button.dblclick({ force: true });
  await page.keyboard.press("Enter");
  release.resolve();
  await expect(page.getByRole("heading", { name: copy.success.title })).toBeVisible();
  expect(inserts.inserts).toBe(1);
});
