// The Chromium the browser tests start (tools/chromium.ts, TEST_CHROMIUM_FLAGS): every feature
// Playwright turns off stays off beside the tests' own, and a test's window starts nothing that
// no test uses.
import { chromium } from "@playwright/test";
import { systemChromium, TEST_CHROMIUM_FLAGS } from "../../../tools/chromium.ts";
import { expect, test } from "./support.ts";

test("keeps off every feature Playwright turns off, beside the tests' own", async () => {
  const server = await chromium.launchServer({ executablePath: systemChromium(), args: TEST_CHROMIUM_FLAGS });
  try {
    const lists = server
      .process()
      .spawnargs.filter((arg) => arg.startsWith("--disable-features="))
      .map((arg) => arg.slice("--disable-features=".length).split(","));
    // Chromium reads the last one alone.
    const read = lists.at(-1) ?? [];
    expect(lists.flat().filter((feature) => !read.includes(feature))).toEqual([]);
  } finally {
    await server.close();
  }
});

test("a test's window starts no page beside its own: no address bar dropdown", async ({ page, browser }) => {
  await page.goto("/");
  const { targetInfos } = (await (await browser.newBrowserCDPSession()).send("Target.getTargets")) as {
    targetInfos: Array<{ type: string; url: string }>;
  };
  expect(targetInfos.filter(({ type }) => type !== "page").map(({ url }) => url)).toEqual([]);
});
