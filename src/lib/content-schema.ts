// What src/content/site.yaml must hold, and the finished copy the pages get from it: the
// placeholders filled in and the launch described. Astro checks the file against this schema
// when it builds (src/content.config.ts) and names the file and the field that do not fit; the
// tests read the same file through it (tests/support/content.ts).
import { z } from "astro/zod";
import { describeLaunch, parseInstant } from "./launch";
import { fillPlaceholders, PLACEHOLDERS, unknownPlaceholders } from "./placeholders";

const LIST = PLACEHOLDERS.map((name) => `{${name}}`).join(", ");

/** Words a visitor reads: not empty, with no placeholder the build does not know. */
const text = () =>
  z
    .string({ error: (issue) => (issue.input === undefined ? "missing" : "must be text") })
    .trim()
    .min(1, "must not be empty")
    .refine((value) => unknownPlaceholders(value).length === 0, {
      error: (issue) =>
        `${unknownPlaceholders(String(issue.input)).join(", ")} is not a placeholder (these are: ${LIST})`,
    });

/** A text that holds `{date}` once, where the page shows the launch as a <time>. */
const lineWithDate = () =>
  text()
    .refine((value) => value.split("{date}").length === 2, "must say {date} once, where the launch goes")
    .transform((value) => {
      const [before, after] = value.split("{date}") as [string, string];
      return { before, after };
    });

const toast = () => z.strictObject({ title: text(), description: text() });

const launch = z.unknown().transform((value, context) => {
  const instant = parseInstant(value);
  if (instant) return instant;
  context.addIssue({
    code: "custom",
    message: `must be the launch instant in UTC, such as 2028-01-01T00:00:00Z, not ${JSON.stringify(value)}`,
  });
  return z.NEVER;
});

/** The content file as written. Strict objects: a misspelt field name is an error, not ignored. */
const contentFile = z.strictObject({
  launch,
  site: z.strictObject({
    name: text().refine((value) => !value.includes("{"), "cannot use placeholders"),
    description: text(),
    socialImage: z.strictObject({ tagline: text(), alt: text() }),
  }),
  landing: z.strictObject({
    badge: text(),
    headline: text(),
    tagline: text(),
    countdownHeading: text(),
    countdown: z.strictObject({ days: text(), hours: text(), minutes: text(), seconds: text() }),
    launchLine: lineWithDate(),
    addToCalendar: text(),
    yourTime: text(),
  }),
  form: z.strictObject({
    heading: text(),
    emailLabel: text(),
    emailPlaceholder: text(),
    phoneLabel: text(),
    phonePlaceholder: text(),
    phoneHint: text(),
    submit: text(),
    submitting: text(),
    note: text(),
    needsJavaScript: text(),
    errors: z.strictObject({ invalid: text(), duplicate: text(), failed: text() }),
    toasts: z.strictObject({ registered: toast(), duplicate: toast(), failed: toast() }),
    success: z.strictObject({ title: text(), message: text() }),
  }),
  notFound: z.strictObject({
    title: text(),
    badge: text(),
    heading: text(),
    message: text(),
    returnLink: text(),
  }),
  calendar: z.strictObject({ title: text(), description: text() }),
});

/** Every string in `value`, placeholders filled in; the rest as it is. */
function fillAll<T>(value: T, fill: (text: string) => string): T {
  if (typeof value === "string") return fill(value) as T;
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fillAll(item, fill)])) as T;
}

/** The content file, checked, and turned into the copy the pages show. */
export const siteContent = contentFile.transform(({ launch: instant, ...copy }) => {
  const launch = describeLaunch(instant);
  const values = { year: launch.year, date: launch.utc, name: copy.site.name };
  return { launch, ...fillAll(copy, (value) => fillPlaceholders(value, values)) };
});

export type SiteContent = z.output<typeof siteContent>;
