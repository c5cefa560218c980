// Site-wide facts that are not words: those, and the launch date, live in src/content/site.yaml.

export const THEME_COLOR = "#05060f";
