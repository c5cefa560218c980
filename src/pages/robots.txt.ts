// /robots.txt: every page may be crawled; a build for the public address names its sitemap.
import type { APIRoute } from "astro";
import { SITE_URL } from "astro:env/server";
import { publicSite, robotsTxt, sitemapUrl } from "../lib/search-files";

export const GET: APIRoute = ({ site }) => {
  const publicAddress = publicSite(site, SITE_URL);
  return new Response(robotsTxt(publicAddress && sitemapUrl(publicAddress)), {
    headers: { "Content-Type": "text/plain; charset=utf-8" },
  });
};
