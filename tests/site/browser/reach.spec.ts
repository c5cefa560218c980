// The sign-up form is within reach on first view, without scrolling: on laptops' short
// screens, as on larger ones, the whole form down to its note; on a phone at least the email
// field. Nothing of the landing page is dropped or reordered to get there.
import type { Locator, Page } from "@playwright/test";
import { content } from "../../support/content.ts";
import { expect, newContext, openLanding, screenshot, test } from "./support.ts";

const { launch, landing, form } = content;

/** The landing page's elements, in the order the page shows them, top to bottom. */
function inPageOrder(page: Page): Array<[string, Locator]> {
  return [
    ["the badge", page.getByText(landing.badge, { exact: true })],
    ["the headline", page.getByRole("heading", { level: 1, name: landing.headline })],
    ["the tagline", page.getByText(landing.tagline)],
    ["the year", page.getByText(launch.year, { exact: true })],
    ["the countdown", page.locator("[data-countdown]")],
    ["the form's heading", page.getByRole("heading", { name: form.heading })],
    ["the email field", page.getByLabel(form.emailLabel)],
    ["the phone field", page.getByLabel(form.phoneLabel)],
    ["the button", page.getByRole("button", { name: form.submit })],
    ["the note", page.getByText(form.note, { exact: true })],
  ];
}

const SCREENS = [
  // Laptops' short screens, the ones that used to need a scroll: everything through the note.
  { width: 1280, height: 720, inView: "the note" },
  { width: 1366, height: 768, inView: "the note" },
  { width: 1440, height: 900, inView: "the note" },
  // A large desktop and a tablet upright, which had room enough before.
  { width: 1920, height: 1080, inView: "the note" },
  { width: 768, height: 1024, inView: "the note" },
  // A phone: the visitor sees where to type, and scrolls for the rest.
  { width: 390, height: 844, inView: "the email field" },
];

for (const { inView, ...viewport } of SCREENS) {
  const size = `${viewport.width}×${viewport.height}`;
  test(`at ${size}, the page shows everything through ${inView} without scrolling, in their order`, async ({
    browser,
  }, testInfo) => {
    const context = await newContext(browser, { viewport });
    const page = await context.newPage();
    await openLanding(page);
    expect(await page.evaluate(() => window.scrollY), "the page opens at its top").toBe(0);

    const elements = inPageOrder(page);
    const last = elements.findIndex(([name]) => name === inView);
    let previousBottom = 0;
    for (const [index, [name, locator]] of elements.entries()) {
      const box = await locator.boundingBox();
      expect(box, `${name} is on the page`).not.toBeNull();
      const { y, height } = box!;
      expect(y, `${name} starts below what comes before it on the page`).toBeGreaterThanOrEqual(
        previousBottom,
      );
      previousBottom = y + height;
      if (index <= last) {
        expect(y + height, `${name} ends within the ${viewport.height} px viewport`).toBeLessThanOrEqual(
          viewport.height,
        );
      }
    }
    await screenshot(page, testInfo, `first-view-${size}`, { fullPage: false });
    await context.close();
  });
}
