// What the build tells search engines: robots.txt, and the sitemap it points to. Only a build
// for the site's public address (SITE_URL) has a sitemap: a local build's address is this
// machine's, which no search engine should be given.
/** The site's public address, when the build was given one (SITE_URL); null for a local build. */
export function publicSite(site: URL | undefined, siteUrlSetting: string | undefined): URL | null {
  return siteUrlSetting !== undefined && site ? site : null;
}

/** Where the sitemap is, for a build that has one. */
export const sitemapUrl = (site: URL) => new URL("/sitemap.xml", site);

/** Every crawler may read every page; the sitemap, when there is one, says where they are. */
export function robotsTxt(sitemap: URL | null): string {
  return (
    ["User-agent: *", "Allow: /", ...(sitemap ? ["", `Sitemap: ${sitemap.href}`] : [])].join("\n") + "\n"
  );
}

const escapeXml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => `&${{ "&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos" }[c]};`);

/** A sitemap (sitemaps.org) of these pages. */
export function sitemapXml(pages: URL[]): string {
  const urls = pages.map((page) => `  <url><loc>${escapeXml(page.href)}</loc></url>`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ...urls,
    "</urlset>",
    "",
  ].join("\n");
}
