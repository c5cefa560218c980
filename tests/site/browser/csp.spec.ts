// Nothing the page does breaks its own Content-Security-Policy, in any state: idle,
// every error, loading, success, the toasts, the not-found page. The browser reports a breach
// as a securitypolicyviolation event (also for a <meta> policy); a real failure is had where it
// can be (a real duplicate), the network fault is faked with page.route.
import { content } from "../../support/content.ts";
import { expect, openLanding, signUpForm, test, toast, uniqueEmail, watchCspViolations } from "./support.ts";

const copy = content.form;

const REST = "**/rest/v1/early_access*";

test("a full sign-up breaks no rule of the CSP", async ({ page }, testInfo) => {
  const violations = await watchCspViolations(page);
  await openLanding(page);
  const f = signUpForm(page);
  await expect(page.locator("[data-local-time=live]")).toBeVisible();

  // The validation error.
  await f.button.click();
  await expect(f.message).toHaveText(copy.errors.invalid);

  // Loading, held until it has been seen, then success and its toast.
  const answer = Promise.withResolvers<void>();
  await page.route(REST, async (route) => {
    if (route.request().method() === "POST") await answer.promise;
    await route.continue();
  });
  await f.email.fill(uniqueEmail(testInfo));
  await f.button.click();
  await expect(f.button).toHaveText(copy.submitting);
  answer.resolve();
  await expect(page.getByRole("heading", { name: copy.success.title })).toBeVisible();
  await expect(toast(page, copy.toasts.registered.title)).toBeVisible();

  expect(violations, "CSP violations during a sign-up").toEqual([]);
});

test("a duplicate and a failed sign-up break no rule of the CSP", async ({ page }, testInfo) => {
  const violations = await watchCspViolations(page);
  const email = uniqueEmail(testInfo);
  await openLanding(page);
  await signUpForm(page).email.fill(email);
  await signUpForm(page).button.click();
  await expect(page.getByRole("heading", { name: copy.success.title })).toBeVisible();

  await openLanding(page);
  await signUpForm(page).email.fill(email);
  await signUpForm(page).button.click();
  await expect(toast(page, copy.toasts.duplicate.title)).toBeVisible();

  await page.route(REST, (route) => route.abort("internetdisconnected"));
  await signUpForm(page).email.fill(uniqueEmail(testInfo, "-2"));
  await signUpForm(page).button.click();
  await expect(toast(page, copy.toasts.failed.title)).toBeVisible();
  await expect(signUpForm(page).message).toHaveText(copy.errors.failed);

  expect(violations, "CSP violations during failed sign-ups").toEqual([]);
});

test("the not-found page breaks no rule of the CSP, and still logs the path", async ({ page }) => {
  const violations = await watchCspViolations(page);
  const logged = page.waitForEvent("console", (message) => message.text().includes("404 Error"));
  await page.goto("/no/such/page");
  expect((await logged).text()).toContain("/no/such/page");
  expect(violations, "CSP violations on the 404 page").toEqual([]);
});
