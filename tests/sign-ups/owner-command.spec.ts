// The owner's side of the page: people sign up through the form in a real browser, then
// `npm run sign-ups` (a process of its own, as the owner runs it beside `npm start`) lists them
// newest first, exports them with no cell a spreadsheet would run, and removes one on request.
// Other tests sign up at the same time on the same backend, so this one looks for its own rows.
import type { Page, TestInfo } from "@playwright/test";
import { content } from "../support/content.ts";
import { runNpmScript } from "../../tools/npm-script.ts";
import { expect, openLanding, signUpForm, test, uniqueEmail } from "../site/browser/support.ts";

const copy = content.form;

async function signUp(page: Page, email: string, phone: string) {
  await openLanding(page);
  const form = signUpForm(page);
  await form.email.fill(email);
  await form.phone.fill(phone);
  await form.button.click();
  await expect(page.getByRole("heading", { name: copy.success.title })).toBeVisible();
}

/** The owner's command with the tests' own settings (their backend's port, the local key). */
const runOwnerCommand = (...args: string[]) => runNpmScript("sign-ups", args);

const people = (testInfo: TestInfo) => [
  { email: uniqueEmail(testInfo, "-first"), phone: "+44 20 7946 0000" },
  { email: uniqueEmail(testInfo, "-second"), phone: "" },
  { email: uniqueEmail(testInfo, "-third"), phone: '=HYPERLINK("http://x.io","y")' },
];

test("three sign-ups on the page are listed newest first, exported safely, and one is removed", async ({
  page,
}, testInfo) => {
  const [first, second, third] = people(testInfo);
  for (const person of [first!, second!, third!]) await signUp(page, person.email, person.phone);

  const list = await runOwnerCommand("list", "--limit", "1000");
  expect(list.status, list.stderr).toBe(0);
  const order = [third!, second!, first!].map(({ email }) => list.stdout.indexOf(email));
  expect(
    order.every((index) => index >= 0),
    list.stdout,
  ).toBe(true);
  expect(order).toEqual([...order].sort((a, b) => a - b));

  const exported = await runOwnerCommand("export");
  expect(exported.status, exported.stderr).toBe(0);
  const line = (email: string) => exported.stdout.split("\r\n").find((row) => row.includes(email));
  expect(line(first!.email)).toMatch(new RegExp(`^"${first!.email}","'\\+44 20 7946 0000","[^"]+Z",,$`));
  expect(line(second!.email)).toMatch(new RegExp(`^"${second!.email}",,"[^"]+Z",,$`));
  expect(line(third!.email)).toMatch(
    new RegExp(`^"${third!.email}","'=HYPERLINK\\(""http://x\\.io"",""y""\\)","[^"]+Z",,$`),
  );

  const removed = await runOwnerCommand("remove", ` ${second!.email.toUpperCase()} `);
  expect(removed).toMatchObject({ status: 0, stderr: `Removed ${second!.email}.\n` });
  const after = await runOwnerCommand("export");
  expect(after.stdout).not.toContain(second!.email);
  expect(after.stdout).toContain(first!.email);
  expect(after.stdout).toContain(third!.email);
});
