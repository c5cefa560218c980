// The social image (og.png, 1200 × 630) a shared link shows: the badge, the site's name, the
// launch year and a tagline on the page's night sky, drawn at build time from the content file
// by satori (layout to SVG) and resvg (SVG to PNG), both WebAssembly, so nothing here can go
// stale and nothing needs a native binary. It never reaches the browser's JavaScript.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import satori from "satori";
import { THEME_COLOR } from "../consts";
import { svgToPng } from "./svg-to-png";

export const SOCIAL_IMAGE = { width: 1200, height: 630 } as const;

/** The width the words may take, inside a margin. */
const CONTENT_WIDTH = SOCIAL_IMAGE.width - 120;

export interface SocialImageCopy {
  badge: string;
  name: string;
  year: string;
  tagline: string;
}

// Files of installed packages, found as their code is.
const resolve = createRequire(import.meta.url).resolve;

/** DejaVu Sans, the face of the image it replaces; satori reads WOFF, not WOFF2. */
const font = (weight: 400 | 700) =>
  readFile(resolve(`@fontsource/dejavu-sans/files/dejavu-sans-latin-${weight}-normal.woff`)).then((data) => ({
    name: "DejaVu Sans",
    data,
    weight,
    style: "normal" as const,
  }));

/**
 * A font size at which `text` fits `width` on one line, at most `max`: DejaVu Sans Bold's
 * characters average about 0.64 em. A longer text than that wraps, at no less than `min`.
 */
export function fittingFontSize(text: string, max: number, width: number, min = max / 2): number {
  return Math.round(Math.max(min, Math.min(max, width / (text.length * 0.64))));
}

export async function renderSocialImage(copy: SocialImageCopy): Promise<Uint8Array<ArrayBuffer>> {
  const svg = await satori(<SocialImage {...copy} />, {
    ...SOCIAL_IMAGE,
    fonts: await Promise.all([font(400), font(700)]),
  });
  return svgToPng(svg);
}

/** The page's look (src/styles/global.css: .backdrop, .headline, .year, Badge.astro), as satori draws it. */
function SocialImage({ badge, name, year, tagline }: SocialImageCopy) {
  return (
    <div
      style={{
        ...SOCIAL_IMAGE,
        display: "flex",
        flexDirection: "column",
        alignItems: "center",
        justifyContent: "center",
        fontFamily: "DejaVu Sans",
        backgroundColor: THEME_COLOR,
        // The faint grid, over the violet and the cyan glow.
        backgroundImage: [
          "linear-gradient(rgba(255, 255, 255, 0.04) 1px, transparent 1px)",
          "linear-gradient(90deg, rgba(255, 255, 255, 0.04) 1px, transparent 1px)",
          "radial-gradient(ellipse 80% 60% at 50% -10%, rgba(124, 58, 237, 0.6), transparent 70%)",
          "radial-gradient(ellipse 60% 50% at 100% 100%, rgba(6, 182, 212, 0.25), transparent 70%)",
        ].join(", "),
        backgroundSize: "56px 56px, 56px 56px, 100% 100%, 100% 100%",
      }}
    >
      <div
        style={{
          display: "flex",
          padding: "10px 28px",
          borderRadius: 9999,
          border: "1px solid rgba(103, 232, 249, 0.3)",
          backgroundColor: "rgba(103, 232, 249, 0.1)",
          color: "#cffafe",
          fontSize: 24,
          fontWeight: 700,
          letterSpacing: 6,
          textTransform: "uppercase",
        }}
      >
        {badge}
      </div>
      <div
        style={{
          display: "flex",
          maxWidth: CONTENT_WIDTH,
          marginTop: 36,
          fontSize: fittingFontSize(name, 100, CONTENT_WIDTH),
          textAlign: "center",
          fontWeight: 700,
          letterSpacing: -1,
          backgroundImage: "linear-gradient(100deg, #ffffff 10%, #ddd6fe 45%, #67e8f9 90%)",
          backgroundClip: "text",
          color: "transparent",
        }}
      >
        {name}
      </div>
      <div
        style={{
          display: "flex",
          fontSize: 150,
          fontWeight: 700,
          lineHeight: 1.1,
          backgroundImage: "linear-gradient(180deg, #f0abfc, #a78bfa 55%, #22d3ee)",
          backgroundClip: "text",
          color: "transparent",
        }}
      >
        {year}
      </div>
      <div
        style={{
          display: "flex",
          maxWidth: CONTENT_WIDTH,
          marginTop: 24,
          fontSize: fittingFontSize(tagline, 30, CONTENT_WIDTH, 22),
          textAlign: "center",
          color: "#cbd5e1",
        }}
      >
        {tagline}
      </div>
    </div>
  );
}
