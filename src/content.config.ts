// The site's words and its launch date: one file, src/content/site.yaml, checked against the
// schema in src/lib/content-schema.ts whenever the site is built.
import { defineCollection } from "astro:content";
import { siteContent } from "./lib/content-schema";
import { yamlDocument } from "./lib/yaml-document";

const site = defineCollection({ loader: yamlDocument("src/content/site.yaml"), schema: siteContent });

export const collections = { site };
