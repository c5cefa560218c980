// The site's words and launch date as the tests expect them: read from the content file through
// the schema the build checks it with, so that an editor's change moves the tests along with the
// page instead of breaking them.
import { resolve } from "node:path";
import { siteContent, type SiteContent } from "../../src/lib/content-schema";
import { readYamlDocument } from "../../src/lib/yaml-document";

/** The content file, relative to the project. */
export const CONTENT_FILE = "src/content/site.yaml";

export const PROJECT = resolve(import.meta.dirname, "../..");

/** The finished copy of the project at `root` (this one unless told otherwise). */
export function readSiteContent(root = PROJECT): SiteContent {
  return siteContent.parse(readYamlDocument(CONTENT_FILE, root));
}

/** This project's copy. */
export const content = readSiteContent();

/** Matches exactly one of `texts`, such as a button's two labels. */
export function oneOf(...texts: string[]): RegExp {
  return new RegExp(`^(?:${texts.map((text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})$`);
}
