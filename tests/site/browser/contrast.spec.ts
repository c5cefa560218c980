// Every text on both pages reads at 4.5:1 or better against whatever it sits on, measured from
// rendered pixels (tests/site/browser/contrast.ts) on a phone and a desktop: at rest, and on the element
// hovered, focused or disabled. axe's contrast rule reads computed colours, and cannot judge a
// text on a gradient, under a translucent layer or through a filter.
import type { Page, TestInfo } from "@playwright/test";
import { content } from "../../support/content.ts";
import { measureContrast, MINIMUM_CONTRAST, type Measured } from "./contrast.ts";
import { expect, test as base } from "./support.ts";

/**
 * Opens `/` once its islands have hydrated (they wait for an idle moment: a while, under load)
 * and the visitor's own time is filled in, which an effect does after hydration: measured before
 * then, its line would be left out of the texts.
 */
async function openLanding(page: Page) {
  await page.goto("/");
  await expect(page.locator("astro-island[ssr]")).toHaveCount(0, { timeout: 30_000 });
  await expect(page.locator("[data-local-time=live]")).toBeVisible();
}

const { form, notFound } = content;

/**
 * A test's `decoder`: a blank page beside `page`, which decodes every capture of the test (one
 * page for all its states: each page of its own is a renderer started, half a second of CPU).
 */
const test = base.extend<{ decoder: Page }>({
  decoder: async ({ page }, use) => {
    const decoder = await page.context().newPage();
    // The measured page in front again, as a visitor sees it: behind the decoder's window it drew
    // a frame a second, and each capture and each wait for a frame waited for one (a minute a test).
    await page.bringToFront();
    await use(decoder);
  },
});

/** Fails with every text below the minimum; attaches every measure to the report. */
async function expectReadable(
  page: Page,
  decoder: Page,
  testInfo: TestInfo,
  state: string,
  options: { within?: string; bothEnds?: boolean } = {},
) {
  const measured = await measureContrast(page, decoder, options);
  const lines = measured.map(
    (m: Measured) => `${m.ratio.toFixed(2)}:1  ${m.glyph} on ${m.background}  ${m.text}`,
  );
  await testInfo.attach(`contrast, ${state}`, { body: lines.join("\n"), contentType: "text/plain" });
  console.log(`${testInfo.project.name} ${testInfo.title}, ${state}:\n  ${lines.join("\n  ")}`);
  expect(measured.length, `texts measured in ${state}`).toBeGreaterThan(0);
  expect(
    measured.filter(({ ratio }) => ratio < MINIMUM_CONTRAST),
    `texts below ${MINIMUM_CONTRAST}:1 in ${state}`,
  ).toEqual([]);
}

for (const viewport of [
  { width: 390, height: 844 },
  { width: 1440, height: 900 },
]) {
  test.describe(`at ${viewport.width} px`, () => {
    test.use({ viewport });
    // Two captures of the viewport for every scroll and state, through large blurs: slow.
    test.setTimeout(600_000);

    test("the landing page", async ({ page, decoder }, testInfo) => {
      await openLanding(page);
      await expectReadable(page, decoder, testInfo, "at rest", { bothEnds: true });

      const button = page.getByRole("button", { name: form.submit });
      await button.hover();
      await expectReadable(page, decoder, testInfo, "the button hovered", { within: "form button" });
      const calendar = page.getByRole("link", { name: content.landing.addToCalendar });
      await calendar.hover();
      await expectReadable(page, decoder, testInfo, "the calendar link hovered", {
        within: ".calendar-link",
      });

      await page.mouse.move(0, 0);
      for (const [target, within] of [
        [calendar, ".calendar-link"],
        [page.getByLabel(form.emailLabel), "form"],
        [button, "form button"],
      ] as const) {
        await target.focus();
        expect(await target.evaluate((element) => element.matches(":focus-visible"))).toBe(true);
        await expectReadable(page, decoder, testInfo, `${within} focused`, { within });
      }
    });

    test("the landing page while it sends (disabled)", async ({ page, decoder }, testInfo) => {
      await openLanding(page);
      // The sign-up held on its way, so that the form stays in its loading state: only the
      // network's timing is faked.
      await page.route("**/rest/v1/early_access**", () => {});
      await page.getByLabel(form.emailLabel).fill("contrast@example.com");
      await page.getByRole("button", { name: form.submit }).click();
      const sending = page.getByRole("button", { name: form.submitting });
      await expect(sending).toBeDisabled();
      await expectReadable(page, decoder, testInfo, "sending", { within: "form" });
    });

    test("the not-found page", async ({ page, decoder }, testInfo) => {
      await page.goto("/no/such/page");
      await expectReadable(page, decoder, testInfo, "at rest", { bothEnds: true });
      const back = page.getByRole("link", { name: notFound.returnLink });
      await back.hover();
      await expectReadable(page, decoder, testInfo, "the link hovered", { within: "main a" });
      await page.mouse.move(0, 0);
      await back.focus();
      expect(await back.evaluate((element) => element.matches(":focus-visible"))).toBe(true);
      await expectReadable(page, decoder, testInfo, "the link focused", { within: "main a" });
    });
  });
}
