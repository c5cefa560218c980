// A toast shows in the viewport, in a place where it covers nothing the visitor needs
// next, at a phone's, a tablet's, two laptops' and a desktop's width, after each outcome of a
// sign-up. The duplicate is real (the address is signed up first); the failure is a faked
// network fault, which cannot be had on demand.
import type { Locator, Page } from "@playwright/test";
import { content } from "../../support/content.ts";
import {
  expect,
  expectNoAxeViolations,
  newContext,
  openLanding,
  screenshot,
  signUpDirectly,
  test,
  uniqueEmail,
} from "./support.ts";

const copy = content.form;

const REST = "**/rest/v1/early_access*";

const VIEWPORTS = [
  { width: 390, height: 844 },
  { width: 768, height: 1024 },
  // A laptop's screen, just too narrow for a toast beside the card, and one just wide enough
  // (Toasts.tsx).
  { width: 1280, height: 720 },
  { width: 1366, height: 768 },
  { width: 1440, height: 900 },
];

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

const OUTCOMES = [
  {
    outcome: "success",
    toast: copy.toasts.registered,
    prepare: async () => {},
    // The panel that replaced the form.
    needed: (page: Page) => ({
      "the panel's heading": page.getByRole("heading", { name: copy.success.title }),
      "the panel's message": page.getByText(copy.success.message, { exact: true }),
    }),
  },
  {
    outcome: "duplicate",
    toast: copy.toasts.duplicate,
    prepare: async (_page: Page, email: string) => signUpDirectly(email),
    needed: formParts,
  },
  {
    outcome: "failure",
    toast: copy.toasts.failed,
    prepare: (page: Page) => page.route(REST, (route) => route.abort("internetdisconnected")),
    needed: formParts,
  },
];

/** What the visitor reads or uses next when the form shows an error. */
function formParts(page: Page): Record<string, Locator> {
  return {
    "the card's heading": page.getByRole("heading", { name: copy.heading }),
    "the email field": page.getByLabel(copy.emailLabel),
    "the error message": page.getByTestId("form-message"),
    "the button": page.getByRole("button", { name: copy.submit }),
    "the note": page.getByText(copy.note, { exact: true }),
  };
}

/** The smallest box around both. */
function union(a: Box, b: Box): Box {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return {
    x,
    y,
    width: Math.max(a.x + a.width, b.x + b.width) - x,
    height: Math.max(a.y + a.height, b.y + b.height) - y,
  };
}

/**
 * The toast's box, with its close button (which sonner hangs half outside the toast's corner),
 * once it has stopped moving: sonner slides a toast in from below the viewport once it has marked
 * it mounted, a frame after it appears, which a busy machine may take long to reach.
 */
async function settledBox(toast: Locator): Promise<Box> {
  await expect(toast).toHaveAttribute("data-mounted", "true");
  await toast.evaluate((element) =>
    Promise.all(element.getAnimations({ subtree: true }).map(({ finished }) => finished.catch(() => {}))),
  );
  const [box, closeBox] = await Promise.all([
    toast.boundingBox(),
    toast.locator("[data-close-button]").boundingBox(),
  ]);
  expect(box && closeBox, "the toast and its close button are on the page").toBeTruthy();
  return union(box!, closeBox!);
}

const overlap = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

const show = ({ x, y, width, height }: Box) =>
  `x ${Math.round(x)}–${Math.round(x + width)}, y ${Math.round(y)}–${Math.round(y + height)}`;

for (const viewport of VIEWPORTS) {
  for (const { outcome, toast, prepare, needed } of OUTCOMES) {
    test(`at ${viewport.width} px, the toast after a ${outcome} lies in the viewport and covers nothing needed next`, async ({
      browser,
    }, testInfo) => {
      const context = await newContext(browser, { viewport });
      const page = await context.newPage();
      const email = uniqueEmail(testInfo);
      await prepare(page, email);
      await openLanding(page);
      // As a visitor does: Playwright scrolls each element into view before it acts on it.
      await page.getByLabel(copy.emailLabel).fill(email);
      await page.getByRole("button", { name: copy.submit }).click();

      const shown = page.locator("[data-sonner-toast]").filter({ hasText: toast.title });
      await expect(shown).toContainText(toast.description);
      const box = await settledBox(shown);

      expect(box.x, `toast at ${show(box)}`).toBeGreaterThanOrEqual(0);
      expect(box.y, `toast at ${show(box)}`).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, `toast at ${show(box)}`).toBeLessThanOrEqual(viewport.width);
      expect(box.y + box.height, `toast at ${show(box)}`).toBeLessThanOrEqual(viewport.height);
      for (const [name, locator] of Object.entries(needed(page))) {
        const part = await locator.boundingBox();
        expect(part, `${name} is on the page`).not.toBeNull();
        expect(overlap(box, part!), `the toast (${show(box)}) covers ${name} (${show(part!)})`).toBe(false);
      }

      await screenshot(page, testInfo, `toast-${outcome}-${viewport.width}`, { fullPage: false });
      await expectNoAxeViolations(page, `the ${outcome} toast at ${viewport.width} px`);
      await context.close();
    });
  }
}

test("a toast goes away on its own while the pointer rests where Notify Me was clicked", async ({
  browser,
}, testInfo) => {
  // The width where the toast used to appear inside the card, under the pointer, which pauses it.
  const context = await newContext(browser, { viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await openLanding(page);
  await page.getByLabel(copy.emailLabel).fill(uniqueEmail(testInfo));
  await page.getByRole("button", { name: copy.submit }).click();
  const shown = page.locator("[data-sonner-toast]").filter({ hasText: copy.toasts.registered.title });
  await expect(shown).toBeVisible();
  // sonner shows a toast for 4 s, then takes it away (a busy machine's browser may be late: the
  // wait ends as soon as it goes).
  await expect(shown).toHaveCount(0, { timeout: 20_000 });
  await context.close();
});
