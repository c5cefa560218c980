// The not-found page: any other path than /, answered with status 404 and plain HTML.
import { content } from "../../support/content.ts";
import { expect, screenshot, test } from "./support.ts";

const { notFound, landing } = content;

test("an unknown path answers 404 with the not-found page", async ({ page }, testInfo) => {
  const logged: string[] = [];
  const otherErrors: string[] = [];
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    // Chromium reports the 404 document itself as a failed resource; that is expected.
    if (message.text().startsWith("Failed to load resource")) return;
    if (message.text().includes("404 Error")) logged.push(message.text());
    else otherErrors.push(message.text());
  });
  page.on("pageerror", (error) => otherErrors.push(error.message));

  const response = await page.goto("/the/future/is/not/here?x=1");
  expect(response?.status()).toBe(404);
  await expect(page).toHaveTitle(notFound.title);
  await expect(page.getByText(notFound.badge, { exact: true })).toBeVisible();
  await expect(page.getByRole("heading", { level: 1, name: notFound.heading })).toBeVisible();
  await expect(page.getByText(notFound.message)).toBeVisible();
  await expect(page.locator('meta[name="robots"]')).toHaveAttribute("content", /noindex/);
  await screenshot(page, testInfo, "not-found");

  // The attempted path is logged.
  expect(logged).toEqual([expect.stringContaining("/the/future/is/not/here")]);
  expect(otherErrors, "other console errors on the 404 page").toEqual([]);

  // No React, no module scripts: plain HTML.
  await expect(page.locator('script[type="module"], astro-island, link[rel="modulepreload"]')).toHaveCount(0);

  await page.getByRole("link", { name: notFound.returnLink }).click();
  await expect(page).toHaveURL("/");
  await expect(page.getByRole("heading", { level: 1, name: landing.headline })).toBeVisible();
});
