// /favicon.ico, which browsers and other clients ask for whatever the page links: Chromium decodes
// it into the icon the pages link (favicon.svg). Its sizes and PNGs: tests/site/build/search-and-icon.test.ts.
import { expect, test } from "./support.ts";

test("/favicon.ico decodes to the picture of favicon.svg", async ({ page }) => {
  await page.goto("/");
  const result = await page.evaluate(async () => {
    const size = 48;
    /** The image at `url` drawn on a size × size canvas, as RGBA bytes. */
    async function pixels(url: string): Promise<Uint8ClampedArray> {
      const image = new Image();
      image.src = url;
      await image.decode();
      const context = new OffscreenCanvas(size, size).getContext("2d")!;
      context.drawImage(image, 0, 0, size, size);
      return context.getImageData(0, 0, size, size).data;
    }
    const [ico, svg] = await Promise.all([pixels("/favicon.ico"), pixels("/favicon.svg")]);
    let total = 0;
    for (let i = 0; i < ico.length; i++) total += Math.abs(ico[i]! - svg[i]!);
    const opaque = ico.filter((alpha, i) => i % 4 === 3 && alpha > 0).length;
    return { opaqueShare: opaque / (size * size), meanDifference: total / ico.length };
  });
  // Mostly opaque (a rounded square), and the same picture: only antialiasing may differ.
  expect(result.opaqueShare).toBeGreaterThan(0.8);
  expect(result.meanDifference).toBeLessThan(4);
});
