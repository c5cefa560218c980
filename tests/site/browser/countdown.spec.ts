// The countdown to the launch, ticking every second. The browser's clock is faked with page.clock: the real date
// cannot be chosen, and a test cannot wait a year for the launch.
import type { Page } from "@playwright/test";
import { content } from "../../support/content.ts";
import { expect, screenshot, test } from "./support.ts";

const LAUNCH = Date.parse(content.launch.at);

/** The instant this long before the launch (after it, when negative). */
function beforeLaunch({ days = 0, hours = 0, minutes = 0, seconds = 0 }): Date {
  return new Date(LAUNCH - (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000);
}

async function countdown(page: Page) {
  const read = async (unit: string) =>
    (await page.locator(`[data-unit="${unit}"] .tabular-nums`).textContent())?.trim();
  return {
    days: await read("days"),
    hours: await read("hours"),
    minutes: await read("minutes"),
    seconds: await read("seconds"),
  };
}

/** Opens `/` with the browser's clock stopped at `instant`; only `runFor` moves it on. */
async function openAt(page: Page, instant: Date) {
  // Installed a second early: the installed clock runs until paused, and pausing at an instant
  // it has already passed fails.
  await page.clock.install({ time: new Date(instant.getTime() - 1_000) });
  await page.clock.pauseAt(instant);
  await page.goto("/");
  // The island hydrates when the browser is idle after the first paint (client:painted), and
  // the faked clock decides when it is idle: move it on in steps too small to change what is
  // shown (the countdown rounds up to whole seconds) until the island is live.
  await expect(async () => {
    await page.clock.runFor(10);
    await expect(page.locator("[data-countdown=live]")).toBeVisible({ timeout: 100 });
  }).toPass();
}

test("the built HTML shows placeholders, not build-time numbers", async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto("/");
  // Figure dashes, as wide as digits.
  expect(await countdown(page)).toEqual({ days: "‒‒‒", hours: "‒‒", minutes: "‒‒", seconds: "‒‒" });
  await context.close();
});

test("shows the time left at a given instant, and ticks every second", async ({ page }, testInfo) => {
  await openAt(page, beforeLaunch({ days: 1, hours: 1, minutes: 1, seconds: 10 }));
  expect(await countdown(page)).toEqual({ days: "01", hours: "01", minutes: "01", seconds: "10" });
  await screenshot(page, testInfo, "countdown");

  await page.clock.runFor(1000);
  expect(await countdown(page)).toEqual({ days: "01", hours: "01", minutes: "01", seconds: "09" });
  await page.clock.runFor(10_000);
  expect(await countdown(page)).toEqual({ days: "01", hours: "01", minutes: "00", seconds: "59" });
});

test("shows three-digit days far from the launch", async ({ page }) => {
  await openAt(page, beforeLaunch({ days: 405 }));
  expect(await countdown(page)).toEqual({ days: "405", hours: "00", minutes: "00", seconds: "00" });
});

test("is right again after the clock jumps (a sleeping laptop wakes)", async ({ page }) => {
  await openAt(page, beforeLaunch({ days: 1 }));
  expect(await countdown(page)).toEqual({ days: "01", hours: "00", minutes: "00", seconds: "00" });
  // The wall clock moves 5 hours while no timer runs, as in a suspended laptop.
  await page.clock.setSystemTime(beforeLaunch({ hours: 19 }));
  await page.clock.runFor(1000);
  expect(await countdown(page)).toEqual({ days: "00", hours: "18", minutes: "59", seconds: "59" });
});

test("reaches zero at the launch and stops there", async ({ page }) => {
  await openAt(page, beforeLaunch({ seconds: 2 }));
  expect(await countdown(page)).toEqual({ days: "00", hours: "00", minutes: "00", seconds: "02" });
  await page.clock.runFor(2000);
  expect(await countdown(page)).toEqual({ days: "00", hours: "00", minutes: "00", seconds: "00" });
  await page.clock.runFor(5000);
  expect(await countdown(page)).toEqual({ days: "00", hours: "00", minutes: "00", seconds: "00" });
});

test("shows zeros, never negative numbers, after the launch", async ({ page }) => {
  await openAt(page, beforeLaunch({ days: -74, hours: -10 }));
  expect(await countdown(page)).toEqual({ days: "00", hours: "00", minutes: "00", seconds: "00" });
});

test("keeps its size when hydrated and when the digits change", async ({ page }) => {
  await page.clock.install({ time: beforeLaunch({ days: 1, hours: 1, minutes: 1, seconds: 10 }) });
  // Block the island's code so the pre-rendered box can be measured first.
  await page.route("**/_astro/Countdown.*.js", (route) => route.abort());
  await page.goto("/");
  const box = () => page.locator("[data-countdown]").boundingBox();
  const before = await box();
  await page.unroute("**/_astro/Countdown.*.js");
  await page.goto("/");
  await expect(page.locator("[data-countdown=live]")).toBeVisible();
  const hydrated = await box();
  await page.clock.runFor(3000);
  expect(hydrated).toEqual(before);
  expect(await box()).toEqual(before);
});

test("is never a live region", async ({ page }) => {
  await openAt(page, beforeLaunch({ days: 1, hours: 1, minutes: 1, seconds: 10 }));
  const countdownRegion = page.locator("[data-countdown]");
  await expect(countdownRegion).not.toHaveAttribute("aria-live");
  await expect(countdownRegion.locator("[aria-live], [role=status], [role=alert], [role=timer]")).toHaveCount(
    0,
  );
});
