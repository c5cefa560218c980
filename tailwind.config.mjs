// @ts-check
// Design tokens. Loaded by src/styles/global.css through Tailwind 4's `@config`.
import { THEME_COLOR } from "./src/consts.ts";

// The landing page's sizes follow the viewport's height as well as its width: compact on a
// laptop's short screen, so that the whole form is in view at first, the full design
// on a tall one. `svh` (the height with a phone's address bar shown), not `dvh`: dynamic units
// change as the bar slides away, and everything sized by them would move while the visitor scrolls.
const SHORT = 720; // px of viewport height where the compact sizes apply (and below)
const TALL = 1080; // px of viewport height where the full sizes apply (and above)
const rem = (/** @type {number} */ px) => `${+(px / 16).toFixed(4)}rem`;

/**
 * The straight line through `short` px, on a viewport 720 px tall, and `tall` px on one 1080 px
 * tall. Its rem part grows with the text zoom.
 * @param {number} short
 * @param {number} tall
 */
function lineByHeight(short, tall) {
  const perSvh = ((tall - short) / (TALL - SHORT)) * 100;
  const base = short - (perSvh * SHORT) / 100;
  return `${+perSvh.toFixed(4)}svh ${base < 0 ? "-" : "+"} ${rem(Math.abs(base))}`;
}

/**
 * That line, held at `short` px below 720 px and at `tall` px above 1080 px.
 * @param {number} short
 * @param {number} tall
 */
const byHeight = (short, tall) => `clamp(${rem(short)}, ${lineByHeight(short, tall)}, ${rem(tall)})`;

/** One step of the landing page's vertical spacing, `factor` times. */
const rhythm = (/** @type {number} */ factor) => byHeight(10 * factor, 32 * factor);

/** @type {import('tailwindcss').Config} */
export default {
  content: ["./src/**/*.{astro,ts,tsx}"],
  theme: {
    extend: {
      colors: {
        // The page's background, which browsers also paint around it (<meta name="theme-color">).
        night: THEME_COLOR,
      },
      spacing: {
        "rhythm-1/2": rhythm(0.5),
        "rhythm-3/4": rhythm(0.75),
        rhythm: rhythm(1),
        "rhythm-5/4": rhythm(1.25),
        // The sign-up card's padding and the space between its fields.
        card: byHeight(20, 32),
        "field-gap": byHeight(14, 20),
      },
      // The hero's big type: no larger than a narrow viewport allows (the headline on one line
      // from 640 px up), nor than a short one does.
      fontSize: {
        headline: [`clamp(2.75rem, min(9.5vw, ${lineByHeight(50, 96)}), 6rem)`, { lineHeight: "1" }],
        year: [`clamp(3.75rem, min(18.5vw, ${lineByHeight(62, 128)}), 8rem)`, { lineHeight: "1" }],
        digits: [`clamp(1.875rem, min(8vw, ${lineByHeight(32, 48)}), 3rem)`, { lineHeight: "1.1" }],
        // The tagline and the sign-up card's heading, a step smaller on a short viewport.
        lead: [byHeight(18, 20), { lineHeight: "1.375" }],
        title: [byHeight(24, 30), { lineHeight: "1.2" }],
      },
      fontFamily: {
        // System faces: no font download, no swap, no layout shift.
        sans: [
          "ui-sans-serif",
          "system-ui",
          "-apple-system",
          '"Segoe UI"',
          "Roboto",
          '"Helvetica Neue"',
          "Arial",
          "sans-serif",
        ],
        display: [
          '"Avenir Next"',
          '"Segoe UI Variable Display"',
          '"Segoe UI"',
          "ui-sans-serif",
          "system-ui",
          "Roboto",
          "sans-serif",
        ],
      },
    },
  },
};
