// Everyone can use the page: axe finds no violations in any state, a keyboard alone can sign
// up, and the page works on a 320 px phone and at 200% zoom.
import type { Page } from "@playwright/test";
import { content } from "../../support/content.ts";
import {
  expect,
  expectNoAxeViolations,
  newContext,
  openLanding,
  screenshot,
  test,
  uniqueEmail,
} from "./support.ts";

const copy = content.form;

const email = (page: Page) => page.getByLabel(copy.emailLabel);
const notifyMe = (page: Page) => page.getByRole("button", { name: copy.submit });

test.describe("axe finds no violations", () => {
  test("on / when idle", async ({ page }) => {
    await openLanding(page);
    await expectNoAxeViolations(page, "the idle form");
  });

  test("on / with a validation error", async ({ page }) => {
    await openLanding(page);
    await notifyMe(page).click();
    await expect(page.getByTestId("form-message")).toBeVisible();
    await expectNoAxeViolations(page, "the validation error");
  });

  test("on / after a duplicate and after a success", async ({ page }, testInfo) => {
    const address = uniqueEmail(testInfo);
    await openLanding(page);
    await email(page).fill(address);
    await notifyMe(page).click();
    await expect(page.getByRole("heading", { name: copy.success.title })).toBeVisible();
    await expectNoAxeViolations(page, "the success panel");

    await openLanding(page);
    await email(page).fill(address);
    await notifyMe(page).click();
    await expect(page.getByTestId("form-message")).toBeVisible();
    await expectNoAxeViolations(page, "the duplicate error");
  });

  test("on the not-found page", async ({ page }) => {
    await page.goto("/nowhere");
    await expectNoAxeViolations(page, "the 404 page");
  });
});

test("a keyboard alone can sign up, and focus lands on the outcome", async ({ page }, testInfo) => {
  await openLanding(page);
  // From the top of the page, Tab reaches the calendar link, the email field, the phone field
  // and the button.
  await page.locator("body").focus();
  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: content.landing.addToCalendar })).toBeFocused();
  await page.keyboard.press("Tab");
  await expect(email(page)).toBeFocused();
  await page.keyboard.type(uniqueEmail(testInfo));
  await page.keyboard.press("Tab");
  await expect(page.getByLabel(copy.phoneLabel)).toBeFocused();
  await page.keyboard.type("+1 555 0100");
  await page.keyboard.press("Tab");
  await expect(notifyMe(page)).toBeFocused();

  // A visible focus ring on the button.
  const outline = await notifyMe(page).evaluate((button) => getComputedStyle(button).outlineStyle);
  expect(outline).not.toBe("none");

  // Enter in a field submits.
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.press("Enter");
  const heading = page.getByRole("heading", { name: copy.success.title });
  await expect(heading).toBeFocused();
  await expect(page.getByRole("status").filter({ hasText: copy.success.title })).toHaveText(
    `${copy.success.title}. ${copy.success.message}`,
  );
});

test("nothing but the form's status region is a live region, and it speaks once per outcome", async ({
  page,
}) => {
  await openLanding(page);
  const live = page.locator("[aria-live], [role=status], [role=alert], [role=log], [role=timer]");
  // sonner's own section is loaded on first use; before that only the form's status region exists.
  await expect(live).toHaveCount(1);
  await notifyMe(page).click();
  await expect(page.getByRole("status")).toHaveText(copy.errors.invalid);
});

for (const [name, viewport, zoom] of [
  ["a 320 px phone", { width: 320, height: 640 }, 1],
  ["200% zoom", { width: 1280, height: 800 }, 2],
] as const) {
  test(`works on ${name} without sideways scrolling`, async ({ browser }, testInfo) => {
    const context = await newContext(browser, { viewport, deviceScaleFactor: 1 });
    const page = await context.newPage();
    await openLanding(page);
    if (zoom !== 1) {
      // Browser zoom shrinks the CSS viewport: 1280 px at 200% lays out as 640 CSS px.
      await page.setViewportSize({ width: viewport.width / zoom, height: viewport.height / zoom });
    }
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow, "horizontal overflow in px").toBeLessThanOrEqual(0);
    await email(page).fill(uniqueEmail(testInfo));
    await notifyMe(page).click();
    await expect(page.getByRole("heading", { name: copy.success.title })).toBeVisible();
    await screenshot(page, testInfo, `success-${name.replace(/\W+/g, "-")}`);
    await context.close();
  });
}
