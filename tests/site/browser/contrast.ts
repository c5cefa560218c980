// Text contrast measured from rendered pixels: the page is captured as shown and with every text
// made transparent (nothing else changes), and the two captures give each text's glyph colours
// (where they differ most) and the background under them. A text's contrast is the WCAG ratio of
// its weakest glyph colour against the background pixel under it that is worst for it: the
// lightest under light text, the darkest under dark text. Computed styles cannot say this where
// a gradient, a translucent layer or a filter makes the colours.
import type { Page } from "@playwright/test";

/** WCAG's threshold for normal text, held for every text here, large or not. */
export const MINIMUM_CONTRAST = 4.5;

export interface Measured {
  /** Which text, as its element and words. */
  text: string;
  ratio: number;
  glyph: string;
  background: string;
}

interface Box {
  index: number;
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Marks the texts shown within `within`: each element with words of its own, or a placeholder. */
function markTexts(page: Page, within: string): Promise<number> {
  return page.evaluate((within) => {
    const root = document.querySelector(within) ?? document.body;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const found = new Set<HTMLElement>();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const element = node.parentElement!;
      if (!node.textContent!.trim() || found.has(element)) continue;
      const box = element.getBoundingClientRect();
      // Shown: not hidden, not a screen-reader-only 1 px box, not in a <noscript>.
      const hidden = getComputedStyle(element).visibility !== "visible" || element.closest("noscript");
      if (!hidden && box.width >= 2 && box.height >= 2) found.add(element);
    }
    // A field's text: what was typed, else its placeholder.
    for (const input of root.querySelectorAll<HTMLInputElement>("input")) {
      if (input.value || input.placeholder) found.add(input);
    }
    [...found].forEach((element, index) => {
      element.setAttribute("data-contrast", String(index));
      // Underlines are not text, and would pass for its colour: gone from both captures, at once
      // (the calendar link's underline fades over 150 ms: under load, the captures caught it at
      // two points of that fade, and its half-faded pixels passed for the text).
      element.style.setProperty("transition", "none", "important");
      element.style.setProperty("text-decoration-color", "transparent", "important");
    });
    return found.size;
  }, within);
}

/** Makes every marked text transparent, or shows it again, leaving all else as it is. */
function hideTexts(page: Page, hidden: boolean): Promise<void> {
  return page.evaluate((hidden) => {
    for (const element of document.querySelectorAll<HTMLElement>("[data-contrast]")) {
      if (element instanceof HTMLInputElement && !element.value) {
        if (hidden) element.dataset.contrastPlaceholder = element.placeholder;
        element.placeholder = hidden ? "" : element.dataset.contrastPlaceholder!;
        continue;
      }
      // Text drawn as its background (background-clip: text) goes with the element's visibility;
      // other text with its colour, so that the element's own background stays.
      const clipped = getComputedStyle(element).backgroundClip === "text";
      const props = clipped ? ["visibility"] : ["color", "-webkit-text-fill-color"];
      for (const target of [element, ...element.querySelectorAll<HTMLElement>("*")]) {
        for (const prop of props) {
          if (!hidden) target.style.removeProperty(prop);
          else target.style.setProperty(prop, prop === "visibility" ? "hidden" : "transparent", "important");
        }
      }
    }
  }, hidden);
}

/**
 * Scrolls the first of `pending` to the middle of the viewport, and returns the boxes (in device
 * pixels) of those of them now wholly in view: each text's own lines, not its element's width.
 */
function boxesInView(page: Page, pending: number[]): Promise<Box[]> {
  return page.evaluate((pending) => {
    const element = (index: number) => document.querySelector<HTMLElement>(`[data-contrast="${index}"]`)!;
    element(pending[0]!).scrollIntoView({ block: "center" });
    const boxes: Box[] = [];
    for (const index of pending) {
      const target = element(index);
      const range = document.createRange();
      range.selectNodeContents(target);
      const box =
        target instanceof HTMLInputElement ? target.getBoundingClientRect() : range.getBoundingClientRect();
      const pad = 2;
      const [left, top] = [Math.floor(box.left) - pad, Math.floor(box.top) - pad];
      const [right, bottom] = [Math.ceil(box.right) + pad, Math.ceil(box.bottom) + pad];
      if (left < 0 || top < 0 || right > innerWidth || bottom > innerHeight) continue;
      const words =
        target instanceof HTMLInputElement
          ? target.value || `${target.placeholder} (placeholder)`
          : target.textContent!;
      const scale = devicePixelRatio;
      boxes.push({
        index,
        name: `<${target.localName}> ${words.trim().replace(/\s+/g, " ").slice(0, 40)}`,
        x: left * scale,
        y: top * scale,
        width: (right - left) * scale,
        height: (bottom - top) * scale,
      });
    }
    return boxes;
  }, pending);
}

/** Waits until the page has painted what it has been told (a capture may otherwise show the frame before). */
const painted = (page: Page) =>
  page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));

/**
 * Stops everything that moves (the captures must differ in their text alone), each element as
 * at its animation's start, or at its end (its last keyframe's values, applied to it), or lets it
 * move again (`null`).
 */
function stopAnimations(page: Page, at: "start" | "end" | null): Promise<void> {
  return page.evaluate((at) => {
    const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const stopped = document.querySelectorAll<HTMLElement>("[data-contrast-stopped]");
    for (const element of stopped) {
      for (const prop of element.dataset.contrastStopped!.split(" ")) element.style.removeProperty(prop);
      delete element.dataset.contrastStopped;
    }
    if (at === null) return;
    const ends = document.getAnimations().map((animation) => {
      const effect = animation.effect as KeyframeEffect;
      return { element: effect.target as HTMLElement, end: effect.getKeyframes().at(-1)! };
    });
    for (const { element, end } of ends) {
      const props = ["animation"];
      element.style.setProperty("animation", "none", "important");
      if (at === "end")
        for (const [name, value] of Object.entries(end)) {
          if (["offset", "computedOffset", "easing", "composite"].includes(name)) continue;
          element.style.setProperty(kebab(name), String(value), "important");
          props.push(kebab(name));
        }
      element.dataset.contrastStopped = props.join(" ");
    }
  }, at);
}

/**
 * The contrast of every text shown within `within` (the whole page by default), as the page is
 * now: hover, focus and the rest left as they are, with what moves stopped at its start and,
 * with `bothEnds`, at its end too. `decoder` is a blank page of the same browser, which decodes
 * the captures (the site's CSP allows no data: image). For each text, its worst measure.
 */
export async function measureContrast(
  page: Page,
  decoder: Page,
  { within = "body", bothEnds = false }: { within?: string; bothEnds?: boolean } = {},
): Promise<Measured[]> {
  const count = await markTexts(page, within);
  const worst = new Map<number, Measured>();
  for (const at of bothEnds ? (["start", "end"] as const) : (["start"] as const)) {
    await stopAnimations(page, at);
    let pending = Array.from({ length: count }, (_, index) => index);
    while (pending.length > 0) {
      const boxes = await boxesInView(page, pending);
      if (boxes.length === 0) throw new Error(`Text ${pending[0]} does not fit in the viewport`);
      await painted(page);
      const shown = await page.screenshot({ caret: "hide" });
      await hideTexts(page, true);
      await painted(page);
      const hidden = await page.screenshot({ caret: "hide" });
      await hideTexts(page, false);
      const measured = await decoder.evaluate(compare, {
        shown: shown.toString("base64"),
        hidden: hidden.toString("base64"),
        boxes,
      });
      for (const [i, box] of boxes.entries()) {
        const result = { text: box.name, ...measured[i]! };
        if (result.ratio < (worst.get(box.index)?.ratio ?? Infinity)) worst.set(box.index, result);
      }
      const done = new Set(boxes.map(({ index }) => index));
      pending = pending.filter((index) => !done.has(index));
    }
  }
  await stopAnimations(page, null);
  await page.evaluate(() =>
    document.querySelectorAll<HTMLElement>("[data-contrast]").forEach((element) => {
      element.removeAttribute("data-contrast");
      element.style.removeProperty("text-decoration-color");
      element.style.removeProperty("transition");
    }),
  );
  return [...worst].sort(([a], [b]) => a - b).map(([, measured]) => measured);
}

/** Runs in the decoder page: for each box, the glyphs' colour, the background's, and their ratio. */
async function compare({ shown, hidden, boxes }: { shown: string; hidden: string; boxes: Box[] }) {
  async function decode(base64: string) {
    const bitmap = await createImageBitmap(await (await fetch(`data:image/png;base64,${base64}`)).blob());
    const context = new OffscreenCanvas(bitmap.width, bitmap.height).getContext("2d")!;
    context.drawImage(bitmap, 0, 0);
    return context.getImageData(0, 0, bitmap.width, bitmap.height);
  }
  const [a, b] = await Promise.all([decode(shown), decode(hidden)]);
  const channel = (value: number) => {
    const c = value / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = (data: Uint8ClampedArray, i: number) =>
    0.2126 * channel(data[i]!) + 0.7152 * channel(data[i + 1]!) + 0.0722 * channel(data[i + 2]!);
  const hex = (data: Uint8ClampedArray, i: number) =>
    "#" + [data[i]!, data[i + 1]!, data[i + 2]!].map((v) => v.toString(16).padStart(2, "0")).join("");

  return boxes.map((box) => {
    const { width, height } = box;
    const at = (x: number, y: number) => ((box.y + y) * a.width + box.x + x) * 4;
    const difference = new Float32Array(width * height);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        const i = at(x, y);
        difference[y * width + x] = Math.max(
          Math.abs(a.data[i]! - b.data[i]!),
          Math.abs(a.data[i + 1]! - b.data[i + 1]!),
          Math.abs(a.data[i + 2]! - b.data[i + 2]!),
        );
      }
    // Glyph pixels: where the text changes the picture. Their cores: those that change it as
    // much as any pixel around them (2 px each way), i.e. fully covered ones, not antialiased edges.
    const glyph: number[] = [];
    const core: number[] = [];
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        const d = difference[y * width + x]!;
        if (d < 32) continue;
        glyph.push(at(x, y));
        let around = 0;
        for (let dy = Math.max(0, y - 2); dy <= Math.min(height - 1, y + 2); dy++)
          for (let dx = Math.max(0, x - 2); dx <= Math.min(width - 1, x + 2); dx++)
            around = Math.max(around, difference[dy * width + dx]!);
        if (d >= 0.9 * around) core.push(at(x, y));
      }
    if (core.length === 0) return { ratio: 0, glyph: "none", background: "none" };

    const byLuminance = (data: Uint8ClampedArray, pixels: number[]) =>
      pixels.map((i) => ({ i, l: luminance(data, i) })).sort((p, q) => p.l - q.l);
    const glyphs = byLuminance(a.data, core);
    const backgrounds = byLuminance(b.data, glyph);
    const median = (list: { l: number }[]) => list[Math.floor(list.length / 2)]!.l;
    const light = median(glyphs) > median(backgrounds);
    // The weakest glyph colour against the worst background. Not quite the weakest pixel: at a
    // glyph's thinnest parts (a serif's tip, a curve's join) no pixel is fully covered, and the
    // weakest tenth of the cores is where those are.
    const weakest = glyphs[light ? Math.floor(glyphs.length * 0.1) : Math.ceil(glyphs.length * 0.9) - 1]!;
    const worst = light ? backgrounds.at(-1)! : backgrounds[0]!;
    const [lighter, darker] = light ? [weakest.l, worst.l] : [worst.l, weakest.l];
    return {
      ratio: Math.round(((lighter + 0.05) / (darker + 0.05)) * 100) / 100,
      glyph: hex(a.data, weakest.i),
      background: hex(b.data, worst.i),
    };
  });
}
