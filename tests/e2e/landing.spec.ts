// Spec §2, landing page: every element, in a real browser against the production build.
import { expect, test } from "@playwright/test";
import { collectErrors, openLanding, screenshot } from "./support.ts";

test("shows every element of the landing page", async ({ page }, testInfo) => {
  const errors = collectErrors(page);
  await openLanding(page);

  await expect(page).toHaveTitle(/The Future Awaits/);
  await expect(page.getByText("Coming Soon", { exact: true })).toBeVisible();
  await expect(page.getByRole("heading", { level: 1, name: "The Future Awaits" })).toBeVisible();
  await expect(page.getByText(/revolutionary AI technology/i)).toBeVisible();
  await expect(page.getByText("2028", { exact: true })).toBeVisible();
  for (const unit of ["Days", "Hours", "Minutes", "Seconds"]) {
    await expect(page.getByText(unit, { exact: true })).toBeVisible();
  }
  await expect(page.locator("time")).toHaveAttribute("datetime", "2028-01-01T00:00:00Z");

  await expect(page.getByRole("heading", { name: "Get Early Access" })).toBeVisible();
  const email = page.getByLabel("Email address");
  await expect(email).toHaveAttribute("type", "email");
  await expect(email).toHaveAttribute("required", "");
  const phone = page.getByLabel("Phone number (optional)");
  await expect(phone).toHaveAttribute("type", "tel");
  await expect(phone).toHaveAttribute("autocomplete", "tel");
  await expect(phone).not.toHaveAttribute("required");
  await expect(page.getByRole("button", { name: "Notify Me" })).toBeEnabled();
  await expect(page.getByText("Your email is safe with us. No spam, just future.")).toBeVisible();

  await screenshot(page, testInfo, "landing-idle");
  expect(errors, `console errors on /: ${errors.join(" | ")}`).toEqual([]);
});

test("has the head a shared link and a search engine need", async ({ page }) => {
  await page.goto("/");
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  const meta = (selector: string) => page.locator(selector).first();
  await expect(meta('meta[name="description"]')).toHaveAttribute("content", /20% off/);
  await expect(meta('meta[name="viewport"]')).toHaveAttribute("content", /width=device-width/);
  await expect(meta('meta[name="theme-color"]')).toHaveAttribute("content", /^#/);
  await expect(meta('meta[property="og:title"]')).toHaveAttribute("content", /The Future Awaits/);
  await expect(meta('meta[name="twitter:card"]')).toHaveAttribute("content", "summary_large_image");
  await expect(page.locator('meta[name="robots"]')).toHaveCount(0);

  // The icon and the social image are served from this site, not a third party.
  for (const selector of ['link[rel="icon"]', 'meta[property="og:image"]']) {
    const element = meta(selector);
    const url = (await element.getAttribute("href")) ?? (await element.getAttribute("content"));
    const response = await page.request.get(new URL(url!, page.url()).pathname);
    expect(response.status(), `${selector} → ${url}`).toBe(200);
  }
});

test("makes no request to another origin", async ({ page, baseURL }) => {
  const foreign: string[] = [];
  page.on("request", (request) => {
    if (new URL(request.url()).origin !== new URL(baseURL!).origin) foreign.push(request.url());
  });
  await openLanding(page);
  await page.getByLabel("Email address").focus(); // loads the lazy parts too
  await page.waitForLoadState("networkidle");
  expect(foreign, "third-party requests").toEqual([]);
});
