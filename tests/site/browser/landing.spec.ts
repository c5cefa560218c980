// The landing page: every element, in a real browser against the production build.
import { utcDateTime } from "../../../src/lib/calendar";
import { localDateTime } from "../../../src/lib/local-time";
import { content } from "../../support/content.ts";
import { collectErrors, expect, newContext, openLanding, screenshot, test } from "./support.ts";

const { launch, site, landing, form } = content;

test("shows every element of the landing page", async ({ page }, testInfo) => {
  const errors = collectErrors(page);
  await openLanding(page);

  await expect(page).toHaveTitle(site.name);
  await expect(page.getByText(landing.badge, { exact: true })).toBeVisible();
  await expect(page.getByRole("heading", { level: 1, name: landing.headline })).toBeVisible();
  await expect(page.getByText(landing.tagline)).toBeVisible();
  await expect(page.getByText(launch.year, { exact: true })).toBeVisible();
  // Screen readers meet the countdown under its own heading.
  await expect(page.getByRole("heading", { level: 2, name: landing.countdownHeading })).toBeAttached();
  for (const unit of Object.values(landing.countdown)) {
    await expect(page.getByText(unit, { exact: true })).toBeVisible();
  }
  const { before, after } = landing.launchLine;
  await expect(page.getByText(`${before}${launch.utc}${after}`)).toBeVisible();
  await expect(page.locator("time").first()).toHaveAttribute("datetime", launch.at);
  await expect(page.getByRole("link", { name: landing.addToCalendar })).toHaveAttribute(
    "href",
    "/launch.ics",
  );

  await expect(page.getByRole("heading", { name: form.heading })).toBeVisible();
  const email = page.getByLabel(form.emailLabel);
  await expect(email).toHaveAttribute("type", "email");
  await expect(email).toHaveAttribute("required", "");
  const phone = page.getByLabel(form.phoneLabel);
  await expect(phone).toHaveAttribute("type", "tel");
  await expect(phone).toHaveAttribute("autocomplete", "tel");
  await expect(phone).not.toHaveAttribute("required");
  await expect(page.getByRole("button", { name: form.submit })).toBeEnabled();
  await expect(page.getByText(form.note)).toBeVisible();

  await screenshot(page, testInfo, "landing-idle");
  expect(errors, `console errors on /: ${errors.join(" | ")}`).toEqual([]);
});

test("has the head a shared link and a search engine need", async ({ page }) => {
  await page.goto("/");
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  const meta = (selector: string) => page.locator(selector).first();
  await expect(meta('meta[name="description"]')).toHaveAttribute("content", site.description);
  await expect(meta('meta[name="viewport"]')).toHaveAttribute("content", /width=device-width/);
  await expect(meta('meta[name="theme-color"]')).toHaveAttribute("content", /^#/);
  await expect(meta('meta[property="og:title"]')).toHaveAttribute("content", site.name);
  await expect(meta('meta[property="og:image:alt"]')).toHaveAttribute("content", site.socialImage.alt);
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
  const href = await page.getByRole("link", { name: landing.addToCalendar }).getAttribute("href");
  const response = await page.request.get(href!);
  expect(response.status()).toBe(200);
  expect(response.headers()["content-type"]).toBe("text/calendar; charset=utf-8");
  const body = await response.text();
  expect(body).toMatch(/^BEGIN:VCALENDAR\r\n/);
  expect(body).toContain(`\r\nDTSTART:${utcDateTime(launch.at)}\r\n`);
});

// Formatted here as Node's Intl formats it (tests/site/local-time.test.ts pins that down); the
// browser must show the same, in its own time zone.
for (const timezoneId of ["America/New_York", "Asia/Tokyo"]) {
  const shown = localDateTime(launch.at, "en-US", timezoneId);
  test(`shows the launch in the visitor's own time zone once hydrated (${timezoneId})`, async ({
    browser,
  }) => {
    const context = await newContext(browser, { timezoneId, locale: "en-US" });
    const page = await context.newPage();
    await openLanding(page);
    await expect(page.locator("[data-local-time]")).toHaveText(`${landing.yourTime} ${shown}`);
    await expect(page.locator("[data-local-time] time")).toHaveAttribute("datetime", launch.at);
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
  const context = await newContext(browser, {
    viewport: { width: 320, height: 640 },
    timezoneId: "Asia/Kolkata",
    locale: "en-US",
  });
  const page = await context.newPage();
  const island = "**/_astro/LocalLaunchTime.*.js";
  const formBox = () => page.getByRole("heading", { name: form.heading }).boundingBox();
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
