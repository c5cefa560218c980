// @ts-check
// Design tokens. Loaded by src/styles/global.css through Tailwind 4's `@config`.
/** @type {import('tailwindcss').Config} */
export default {
  content: ["./src/**/*.{astro,ts,tsx}"],
  theme: {
    extend: {
      colors: {
        night: "#05060f",
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
