// The social image that shared links show (og:image), drawn from the content file when the site is
// built and written into it as /og.png.
import type { APIRoute } from "astro";
import { getSiteContent } from "../lib/content";
import { renderSocialImage } from "../lib/social-image";

export const GET: APIRoute = async () => {
  const { launch, site, landing } = await getSiteContent();
  const png = await renderSocialImage({
    badge: landing.badge,
    name: site.name,
    year: launch.year,
    tagline: site.socialImage.tagline,
  });
  return new Response(png, { headers: { "Content-Type": "image/png" } });
};
