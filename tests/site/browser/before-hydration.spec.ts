// The sign-up form is visible, and can be used, long before its island hydrates (on a slow
// phone, for seconds). Nothing typed or submitted in that time may be lost, or end up in a
// URL (the history, the host's access logs, referrers). A slow network is faked by holding back
// the island's script with page.route; the no-JavaScript case switches JavaScript off.
import type { Page } from "@playwright/test";
import { content } from "../../support/content.ts";
import {
  API_URL,
  collectErrors,
  countRestCalls,
  expect,
  screenshot,
  signUpDirectly,
  signUpForm,
  storedRows,
  test,
  toast,
  uniqueEmail,
} from "./support.ts";

const copy = content.form;

const FORM_ISLAND = "**/_astro/EarlyAccessForm.*.js";
// @astrojs/react's client renderer, which brings react-dom: without it, no island hydrates.
const REACT_RENDERER = "**/_astro/client.*.js";
const REST = "**/rest/v1/early_access*";
const PHONE = "+1 555 0100";

/** Holds back a script, as a slow network would, until `release()`: the form island's by default. */
async function holdBackScript(page: Page, script = FORM_ISLAND): Promise<{ release: () => void }> {
  const held = Promise.withResolvers<void>();
  await page.route(script, async (route) => {
    await held.promise;
    await route.continue();
  });
  return { release: () => held.resolve() };
}

/** Every URL the page requests or navigates to, from now on. */
function urlsSeen(page: Page): string[] {
  const urls: string[] = [];
  page.on("request", (request) => urls.push(request.url()));
  page.on("framenavigated", (frame) => frame === page.mainFrame() && urls.push(frame.url()));
  return urls;
}

/** The URLs that carry any of the typed values, however they are encoded. */
function leaking(urls: string[], ...typed: string[]): string[] {
  return urls.filter((url) => {
    const plain = decodeURIComponent(url.replaceAll("+", " ")).toLowerCase();
    return typed.some((value) => plain.includes(value.toLowerCase()));
  });
}

test("a sign-up submitted before the form hydrates is held, then sent once as typed", async ({
  page,
  baseURL,
}, testInfo) => {
  const email = uniqueEmail(testInfo);
  const urls = urlsSeen(page);
  const inserts = countRestCalls(page);
  const island = await holdBackScript(page);
  await page.goto("/");
  const f = signUpForm(page);
  await expect(f.island).toHaveAttribute("ssr");

  await f.email.fill(email.toUpperCase());
  await f.phone.fill(PHONE);
  // Enter in a field, then the button too, as an impatient visitor would.
  await page.keyboard.press("Enter");
  await f.button.click();
  await expect(f.island).toHaveAttribute("data-sign-up", "held");
  await expect(f.island).toHaveAttribute("aria-busy", "true");
  await expect(f.email).toHaveValue(email.toUpperCase());
  await expect(f.phone).toHaveValue(PHONE);
  await screenshot(page, testInfo, "form-held-before-hydration");
  expect(inserts.inserts).toBe(0);

  // Once the island's module is here, the held submit is sent, and shows as the spec's loading
  // state while the answer is held back; React waits for the answer before it hydrates.
  const answer = Promise.withResolvers<void>();
  await page.route(REST, async (route) => {
    if (route.request().method() === "POST") await answer.promise;
    await route.continue();
  });
  island.release();
  await expect(f.button).toHaveText(copy.submitting);
  await expect(f.button).toBeDisabled();
  await expect(f.email).toBeDisabled();
  await expect(f.phone).toBeDisabled();
  await expect(f.island).toHaveAttribute("data-sign-up", "sent");
  await expect(f.island).toHaveAttribute("ssr");
  answer.resolve();

  await expect(page.getByRole("heading", { name: copy.success.title })).toBeVisible();
  await expect(f.island).toHaveAttribute("data-sign-up", "island");
  await expect(f.island).not.toHaveAttribute("aria-busy");
  expect(inserts.inserts).toBe(1);
  expect(await storedRows(email)).toEqual([{ email, phone: PHONE }]);
  expect(page.url()).toBe(`${baseURL}/`);
  expect(leaking(urls, email, PHONE), "URLs carrying what was typed").toEqual([]);
});

test("a sign-up submitted while React is still on its way is sent at once, and once, and its success shows at once", async ({
  page,
}, testInfo) => {
  const email = uniqueEmail(testInfo);
  const inserts = countRestCalls(page);
  const errors = collectErrors(page);
  const react = await holdBackScript(page, REACT_RENDERER);
  await page.goto("/");
  const f = signUpForm(page);
  await f.email.fill(email);
  await f.phone.fill(PHONE);
  // The answer held back until the visitor has insisted.
  const answer = Promise.withResolvers<void>();
  await page.route(REST, async (route) => {
    await answer.promise;
    await route.continue();
  });
  await page.keyboard.press("Enter");
  await expect(f.island).toHaveAttribute("data-sign-up", "sent");
  // The spec's loading state, shown by the page itself while the island waits for React.
  await expect(f.button).toHaveText(copy.submitting);
  await expect(f.button).toBeDisabled();
  await expect(f.email).toBeDisabled();
  // Not a second time either, however impatient the visitor.
  await f.button.click({ force: true });
  answer.resolve();

  // The island's own module has arrived, React has not: the sign-up went out anyway, and its
  // success replaces the form, as the island would, with the focus on it.
  const heading = page.getByRole("heading", { name: copy.success.title });
  await expect(heading).toBeVisible();
  await expect(heading).toBeFocused();
  await expect(page.getByRole("status").filter({ hasText: copy.success.message })).toHaveCount(1);
  await expect(f.island).toHaveAttribute("ssr");
  await expect(f.island).toHaveAttribute("data-sign-up", "shown");
  await expect(f.island).not.toHaveAttribute("aria-busy");
  await expect(f.email).toHaveCount(0);
  await screenshot(page, testInfo, "success-before-hydration");

  // React then hydrates the page as it is, without a mismatch, and the toast follows.
  react.release();
  await expect(f.island).toHaveAttribute("data-sign-up", "island");
  await expect(page.locator("astro-island[ssr]")).toHaveCount(0);
  await expect(toast(page, copy.toasts.registered.title)).toBeVisible();
  await expect(heading).toBeVisible();
  await expect(page.getByTestId("success-panel")).toHaveCount(1);
  expect(inserts.inserts).toBe(1);
  expect(errors, "errors in the console (a hydration mismatch, say)").toEqual([]);
  expect(await storedRows(email)).toEqual([{ email, phone: PHONE }]);
});

test("a refusal answered while React is still on its way waits for the island to say it", async ({
  page,
}, testInfo) => {
  const email = uniqueEmail(testInfo);
  await signUpDirectly(email);
  const errors = collectErrors(page);
  const react = await holdBackScript(page, REACT_RENDERER);
  await page.goto("/");
  const f = signUpForm(page);
  await f.email.fill(email);
  await page.keyboard.press("Enter");
  await expect(f.island).toHaveAttribute("data-sign-up", "answered");
  await expect(f.island).toHaveAttribute("aria-busy", "true");
  // The loading state ends: the form is as served, what was typed still in it.
  await expect(f.button).toHaveText(copy.submit);
  await expect(f.email).toBeEnabled();
  await expect(f.email).toHaveValue(email);
  react.release();
  await expect(f.message).toHaveText(copy.errors.duplicate);
  await expect(toast(page, copy.toasts.duplicate.title)).toBeVisible();
  await expect(f.email).toBeFocused();
  // The browser itself logs the 409 it was answered.
  const ownErrors = errors.filter((error) => !error.includes("status of 409"));
  expect(ownErrors, "errors in the console (a hydration mismatch, say)").toEqual([]);
});

/** The copies of supabase-js the page has fetched, from now on (its code names x-client-info). */
function supabaseJsFetched(page: Page): () => string[] {
  const scripts: string[] = [];
  page.on("response", async (response) => {
    if (response.request().resourceType() !== "script") return;
    // A body still on its way when the test ends can no longer be read, and no longer matters.
    const text = await response.text().catch(() => "");
    scripts.push(text.toLowerCase());
  });
  return () => scripts.filter((script) => script.includes("x-client-info"));
}

test("turning to the form opens a connection to Supabase and fetches its client; looking does neither", async ({
  page,
}) => {
  const supabaseJs = supabaseJsFetched(page);
  const preconnect = page.locator(`link[rel=preconnect][href="${new URL(API_URL).origin}"]`);
  await page.goto("/");
  // Every island hydrated (the form's too, when idle): all the page loads without a visitor.
  await expect(page.locator("astro-island[ssr]")).toHaveCount(0);
  await page.waitForLoadState("networkidle");
  expect(supabaseJs(), "supabase-js loaded before anyone turned to the form").toEqual([]);
  await expect(preconnect).toHaveCount(0);

  await signUpForm(page).email.focus();
  await expect(preconnect).toHaveAttribute("crossorigin", "");
  await expect.poll(() => supabaseJs().length, { message: "supabase-js, once the form has focus" }).toBe(1);
});

test("turning to the form fetches supabase-js and React's modules beside the island, not after it", async ({
  page,
}) => {
  const supabaseJs = supabaseJsFetched(page);
  // The island held back: whatever arrives meanwhile was asked for by client:form itself.
  const island = await holdBackScript(page);
  await page.goto("/");
  await signUpForm(page).email.focus();
  await expect
    .poll(() => supabaseJs().length, {
      message: "supabase-js, while the island is still on its way",
    })
    .toBe(1);
  const preloaded = await page
    .locator("link[rel=modulepreload]")
    .evaluateAll((links) => links.map((link) => (link as HTMLLinkElement).href));
  expect(preloaded.length, "the island's and React's imports, and supabase-js").toBeGreaterThanOrEqual(3);
  island.release();
  await expect(page.locator("astro-island[ssr]")).toHaveCount(0);
});

test("in a browser without modulepreload, turning to the form still lets every island hydrate", async ({
  page,
}) => {
  // Safari before 17 and Firefox before 115 know no rel=modulepreload: they neither fetch such a
  // link nor fire its load or error event. Chromium is made to act so: it is told it lacks it,
  // and a link given that rel gets one it does not know.
  await page.addInitScript(() => {
    const supports = DOMTokenList.prototype.supports;
    DOMTokenList.prototype.supports = function (token) {
      return token !== "modulepreload" && supports.call(this, token);
    };
    const rel = Object.getOwnPropertyDescriptor(HTMLLinkElement.prototype, "rel")!;
    Object.defineProperty(HTMLLinkElement.prototype, "rel", {
      ...rel,
      set(value: string) {
        rel.set!.call(this, value === "modulepreload" ? "unknown-to-this-browser" : value);
      },
    });
  });
  // The island held back, so that the visitor turns to the form before it can hydrate.
  const island = await holdBackScript(page);
  await page.goto("/");
  await signUpForm(page).email.focus();
  island.release();
  await expect(page.locator("astro-island[ssr]")).toHaveCount(0);
});

test("what is typed before the form hydrates is what is sent after it", async ({ page }, testInfo) => {
  const email = uniqueEmail(testInfo);
  const island = await holdBackScript(page);
  await page.goto("/");
  const f = signUpForm(page);
  await f.email.fill(email);
  await f.phone.fill(PHONE);
  island.release();
  await expect(page.locator("astro-island[ssr]")).toHaveCount(0);

  await expect(f.email).toHaveValue(email);
  await f.button.click();
  await expect(page.getByRole("heading", { name: copy.success.title })).toBeVisible();
  expect(await storedRows(email)).toEqual([{ email, phone: PHONE }]);
});

test("an address submitted before the form hydrates is checked like any other", async ({ page }) => {
  const inserts = countRestCalls(page);
  const island = await holdBackScript(page);
  await page.goto("/");
  const f = signUpForm(page);
  await f.email.fill("future.example.com");
  await page.keyboard.press("Enter");
  island.release();
  await expect(f.message).toHaveText(copy.errors.invalid);
  await expect(f.email).toHaveValue("future.example.com");
  expect(inserts.inserts).toBe(0);
});

const noScriptSubmits: Array<[string, (page: Page) => Promise<void>]> = [
  ["pressing Enter in a field", (page) => page.keyboard.press("Enter")],
  // noWaitAfter: Chromium announces the form's navigation before the CSP blocks it, and
  // Playwright would wait for it forever.
  ["clicking Notify Me", (page) => signUpForm(page).button.click({ noWaitAfter: true })],
];

for (const [how, submit] of noScriptSubmits) {
  test(`without JavaScript, ${how} goes nowhere, keeps what was typed and says why`, async ({
    browser,
    baseURL,
  }, testInfo) => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    const urls = urlsSeen(page);
    const email = uniqueEmail(testInfo);
    await page.goto("/");
    // Playwright's getByText never looks inside <noscript>.
    const notice = page.locator("noscript p");
    await expect(notice).toBeVisible();
    await expect(notice).toHaveText(copy.needsJavaScript);
    const f = signUpForm(page);
    await f.email.fill(email);
    await f.phone.fill(PHONE);
    if (how.startsWith("clicking")) await screenshot(page, testInfo, "form-without-javascript");

    // The page's CSP (form-action 'none') stops the submission, and says so in the console.
    const blocked = page.waitForEvent("console", (message) => message.text().includes("form-action"));
    await submit(page);
    await blocked;

    // Read the page itself: after that blocked navigation, Playwright's locators keep waiting.
    const after = await page.evaluate(() => ({
      url: location.href,
      email: document.querySelector<HTMLInputElement>("input[name=email]")?.value,
      phone: document.querySelector<HTMLInputElement>("input[name=phone]")?.value,
    }));
    expect(after).toEqual({ url: `${baseURL}/`, email, phone: PHONE });
    expect(leaking(urls, email, PHONE), "URLs carrying what was typed").toEqual([]);
    await context.close();
  });
}
