// Words that the content file lets any text use, such as "Return to {year}": the build writes the
// launch year, the launch in UTC or the site's name in their place, so no text repeats a fact.

export const PLACEHOLDERS = ["year", "date", "name"] as const;

export type Placeholder = (typeof PLACEHOLDERS)[number];

const PATTERN = /\{([^{}]*)\}/g;

/** The {…} in `text` that are not placeholders, such as a misspelt "{yaer}". */
export function unknownPlaceholders(text: string): string[] {
  return [...text.matchAll(PATTERN)]
    .filter(([, name]) => !(PLACEHOLDERS as readonly string[]).includes(name!))
    .map(([match]) => match);
}

/** `text` with each placeholder replaced by its value. */
export function fillPlaceholders(text: string, values: Record<Placeholder, string>): string {
  return text.replace(PATTERN, (match, name: string) => values[name as Placeholder] ?? match);
}
