// /sitemap.xml, the one page search engines may list, written only by a build for the site's
// public address (SITE_URL): a route with a parameter, so that a local build can have no such
// file at all (no path, no file).
import type { APIRoute, GetStaticPaths } from "astro";
import { SITE_URL } from "astro:env/server";
import { publicSite, sitemapXml } from "../lib/search-files";

export const getStaticPaths = (() =>
  publicSite(new URL(import.meta.env.SITE), SITE_URL)
    ? [{ params: { sitemap: "sitemap" } }]
    : []) satisfies GetStaticPaths;

export const GET: APIRoute = ({ site }) =>
  new Response(sitemapXml([new URL("/", site)]), {
    headers: { "Content-Type": "application/xml; charset=utf-8" },
  });
