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
  await expect(page.getByText("Launching January 1, 2028, 00:00 UTC")).toBeVisible();
  await expect(page.locator("time").first()).toHaveAttribute("datetime", "2028-01-01T00:00:00Z");
  await expect(page.getByRole("link", { name: "Add to calendar" })).toHaveAttribute("href", "/launch.ics");

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

test("Add to calendar downloads the launch as a calendar event", async ({ page }) => {
  await openLanding(page);
  const href = await page.getByRole("link", { name: "Add to calendar" }).getAttribute("href");
  const response = await page.request.get(href!);
  expect(response.status()).toBe(200);
  expect(response.headers()["content-type"]).toBe("text/calendar; charset=utf-8");
  const body = await response.text();
  expect(body).toMatch(/^BEGIN:VCALENDAR\r\n/);
  expect(body).toContain("\r\nDTSTART:20280101T000000Z\r\n");
});

for (const [timezoneId, shown] of [
  ["America/New_York", "Fri, Dec 31, 2027, 7:00 PM EST"],
  ["Asia/Tokyo", "Sat, Jan 1, 2028, 9:00 AM GMT+9"],
] as const) {
  test(`shows the launch in the visitor's own time zone once hydrated (${timezoneId})`, async ({
    browser,
  }) => {
    const context = await browser.newContext({ timezoneId, locale: "en-US" });
    const page = await context.newPage();
    await openLanding(page);
    await expect(page.locator("[data-local-time]")).toHaveText(`Your time: ${shown}`);
    await expect(page.locator("[data-local-time] time")).toHaveAttribute("datetime", "2028-01-01T00:00:00Z");
    await context.close();
  });
}

test("the built HTML holds no local time, which the build cannot know", async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto("/");
  await expect(page.locator("[data-local-time]")).toHaveText("");
  await context.close();
});

test("nothing moves when the local time appears, even where it takes two lines", async ({ browser }) => {
  // A 320 px phone in India: "Your time: Sat, Jan 1, 2028, 5:30 AM GMT+5:30" wraps there.
  const context = await browser.newContext({
    viewport: { width: 320, height: 640 },
    timezoneId: "Asia/Kolkata",
    locale: "en-US",
  });
  const page = await context.newPage();
  const island = "**/_astro/LocalLaunchTime.*.js";
  const formBox = () => page.getByRole("heading", { name: "Get Early Access" }).boundingBox();
  // The island's code blocked: the page as it is before hydration.
  await page.route(island, (route) => route.abort());
  await page.goto("/");
  const before = await formBox();
  await page.unroute(island);
  await openLanding(page);
  await expect(page.locator("[data-local-time=live]")).toBeVisible();
  expect(await formBox()).toEqual(before);
  await context.close();
});
