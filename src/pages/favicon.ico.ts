// /favicon.ico, which many clients ask for whatever the page links: the site's icon
// (public/favicon.svg, which the pages link), drawn at the sizes browsers and Windows use.
import type { APIRoute } from "astro";
import { ico } from "../lib/ico";
import { svgToPng } from "../lib/svg-to-png";
import icon from "../../public/favicon.svg?raw";

const SIZES = [16, 32, 48];

export const GET: APIRoute = async () => {
  const images = await Promise.all(
    SIZES.map(async (size) => ({
      size,
      png: await svgToPng(icon, { fitTo: { mode: "width", value: size } }),
    })),
  );
  return new Response(ico(images), { headers: { "Content-Type": "image/x-icon" } });
};
