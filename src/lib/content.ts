// The site's copy for the pages, from the content collection (src/content.config.ts).
import { getEntry } from "astro:content";
import type { SiteContent } from "./content-schema";

export async function getSiteContent(): Promise<SiteContent> {
  const entry = await getEntry("site", "site");
  if (!entry) throw new Error("src/content/site.yaml was not loaded: the build's log says why.");
  return entry.data;
}
