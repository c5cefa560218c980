// What the browser tests share: their `test`, whose pages hold the endless animations still,
// loading a page until its islands are live, collecting console errors, saving screenshots to
// look at, axe's verdict, and signing up or reading the database past the page.
import AxeBuilder from "@axe-core/playwright";
import {
  test as base,
  expect,
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  type Page,
  type TestInfo,
} from "@playwright/test";
import { mkdirSync } from "node:fs";
import { LOCAL_SECRET_KEY } from "../../../config/local-supabase.ts";
import { LOCAL_PUBLISHABLE_KEY } from "../../../config/local-supabase.ts";
import { content, oneOf } from "../../support/content.ts";
import { useTestEnvironment } from "../../test-environment.ts";

const copy = content.form;

/** The local Supabase the tests' server runs, on the tests' own port. */
export const API_URL = useTestEnvironment().apiUrl;

export const SCREENSHOT_DIR = "tests/artifacts/screenshots";

/**
 * Holds every endless animation of the pages of `context` (the backdrop's drift, the badge's
 * pulse, a spinner) where it starts, from the page's first frame on. They change nothing a test
 * reads (axe waits for every other animation to end; contrast.spec.ts measures the drift at both
 * ends itself), but while they run the browser redraws the viewport at every frame: about 40% of
 * a core for each open page, a tenth of the browser tests' CPU. Other animations and transitions
 * (a toast's, a link's) run as a visitor sees them. A page without scripts (javaScriptEnabled:
 * false) keeps them running.
 */
async function holdEndlessAnimations(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    document.addEventListener(
      "animationstart",
      (event) => {
        for (const animation of (event.target as Element).getAnimations({ subtree: true })) {
          if (animation.effect?.getComputedTiming().iterations === Infinity) animation.pause();
        }
      },
      true,
    );
  });
}

/** Playwright's `test`, whose `page` holds the endless animations (holdEndlessAnimations). */
export const test = base.extend({
  context: async ({ context }, use) => {
    await holdEndlessAnimations(context);
    await use(context);
  },
});
export { expect };

/** A context of its own (a viewport, a time zone), whose pages hold the endless animations. */
export async function newContext(browser: Browser, options: BrowserContextOptions): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  await holdEndlessAnimations(context);
  return context;
}

/** Opens `/` and waits until both islands have hydrated (Astro drops `ssr` when they have). */
export async function openLanding(page: Page): Promise<void> {
  await page.goto("/");
  await expect(page.locator("astro-island[ssr]")).toHaveCount(0);
}

/** Console errors and uncaught exceptions, collected from the moment it is called. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => message.type() === "error" && errors.push(message.text()));
  page.on("pageerror", (error) => errors.push(error.message));
  return errors;
}

/**
 * Every breach of the page's Content-Security-Policy, as `securitypolicyviolation` events report
 * them, from the next page load on. Call before `goto`.
 */
export async function watchCspViolations(page: Page): Promise<string[]> {
  const violations: string[] = [];
  // A binding and an init script: Playwright injects both past the page's CSP.
  await page.exposeFunction("reportCspViolation", (violation: string) => violations.push(violation));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      const report = (window as unknown as { reportCspViolation: (violation: string) => void })
        .reportCspViolation;
      report(`${event.effectiveDirective} blocked ${event.blockedURI || "inline"}: ${event.sample}`);
    });
  });
  return violations;
}

/**
 * A screenshot kept as an artifact, and attached to the test's report: of the full page, or of
 * what the viewport shows (where fixed elements such as toasts really are).
 */
export async function screenshot(
  page: Page,
  testInfo: TestInfo,
  name: string,
  { fullPage = true } = {},
): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = `${SCREENSHOT_DIR}/${name}.png`;
  await page.screenshot({ path, fullPage, animations: "disabled" });
  await testInfo.attach(name, { path, contentType: "image/png" });
}

/** The sign-up form's parts, by what the visitor reads (src/content/site.yaml). */
export function signUpForm(page: Page) {
  return {
    island: page.locator('astro-island[client="form"]'),
    email: page.getByLabel(copy.emailLabel),
    phone: page.getByLabel(copy.phoneLabel),
    button: page.getByRole("button", { name: oneOf(copy.submit, copy.submitting) }),
    message: page.getByTestId("form-message"),
    status: page.getByRole("status").filter({ hasNotText: /^$/ }),
  };
}

/** The toast with this title. */
export const toast = (page: Page, title: string) =>
  page.locator("[data-sonner-toast]").filter({ hasText: title });

/** Fails with every rule axe finds broken on the page as it is now, in `state`. */
export async function expectNoAxeViolations(page: Page, state: string): Promise<void> {
  // Toasts animate in: wait until nothing moves or fades any more, so axe sees final colours
  // (the backdrop's drift and the badge's pulse never end, and change no text's colour).
  const settling = () =>
    document
      .getAnimations()
      .filter((a) => a.playState === "running" && a.effect?.getComputedTiming().iterations !== Infinity)
      .length;
  await expect
    .poll(() => page.evaluate(settling), {
      message: "animations still running",
      // Ends as soon as they have; a busy machine's browser may take a while.
      timeout: 20_000,
    })
    .toBe(0);
  const { violations } = await new AxeBuilder({ page }).analyze();
  const summary = violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(summary, `${violations.length} accessibility violations in ${state}`).toEqual([]);
}

/** An address no other test uses. */
export function uniqueEmail(testInfo: TestInfo, tag = ""): string {
  return `e2e-${testInfo.testId}${tag}-${Date.now()}@example.com`;
}

/** The rows stored for an address, read with the service role (anon can never read the list). */
export async function storedRows(email: string): Promise<Array<{ email: string; phone: string | null }>> {
  const response = await fetch(
    `${API_URL}/rest/v1/early_access?select=email,phone&email=eq.${encodeURIComponent(email)}`,
    { headers: { apikey: LOCAL_SECRET_KEY, authorization: `Bearer ${LOCAL_SECRET_KEY}` } },
  );
  expect(response.status, "service_role can read the list").toBe(200);
  return response.json();
}

/** Signs an address up as a visitor's browser would, without the page (for a real duplicate). */
export async function signUpDirectly(email: string): Promise<void> {
  const response = await fetch(`${API_URL}/rest/v1/early_access`, {
    method: "POST",
    headers: {
      apikey: LOCAL_PUBLISHABLE_KEY,
      "content-type": "application/json",
      prefer: "return=minimal",
    },
    body: JSON.stringify({ email, phone: null }),
  });
  expect(response.status, `signing ${email} up: ${await response.text()}`).toBe(201);
}

/** Requests the page sends to the REST interface, counted from the moment it is called. */
export function countRestCalls(page: Page): { readonly inserts: number } {
  const counter = { inserts: 0 };
  page.on("request", (request) => {
    if (request.url().includes("/rest/v1/early_access") && request.method() === "POST") counter.inserts++;
  });
  return counter;
}
