// The content file's schema: what an editor's mistake makes the build say. Each case breaks a
// copy of the real file, read as the build reads it, so the cases hold whatever its words are.
import { describe, expect, it } from "vitest";
import { siteContent } from "../../src/lib/content-schema";
import { readYamlDocument } from "../../src/lib/yaml-document";
import { CONTENT_FILE, PROJECT } from "../support/content";

type Document = Record<string, Record<string, unknown>>;

/** The content file as YAML gives it, for a case to change. */
const written = () => readYamlDocument(CONTENT_FILE, PROJECT) as Document;

/** Each problem the schema reports: "the.field: message". */
function problems(document: unknown): string[] {
  const result = siteContent.safeParse(document);
  return result.success
    ? []
    : result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
}

describe("the content file as it is", () => {
  it("fits the schema", () => {
    expect(problems(written())).toEqual([]);
  });
});

describe("a mistake names the field", () => {
  it.each<[string, (document: Document) => void, string[]]>([
    // A field left out.
    ["missing", (d) => delete d.landing!.headline, ["landing.headline: missing"]],
    // A misspelt name: the right one is missing, the wrong one unknown.
    [
      "misspelt",
      (d) => {
        d.landing!.headlin = d.landing!.headline;
        delete d.landing!.headline;
      },
      ["landing.headline: missing", 'landing: Unrecognized key: "headlin"'],
    ],
    // Left empty.
    ["empty", (d) => (d.form!.submit = "  "), ["form.submit: must not be empty"]],
    // A number where words belong (YAML reads 2028 as one).
    ["a number", (d) => (d.notFound!.returnLink = 2028), ["notFound.returnLink: must be text"]],
    // A misspelt placeholder.
    [
      "an unknown placeholder",
      (d) => (d.notFound!.returnLink = "Return to {yaer}"),
      ["notFound.returnLink: {yaer} is not a placeholder (these are: {year}, {date}, {name})"],
    ],
    // The launch line must say where the date goes, once.
    [
      "no {date} in the launch line",
      (d) => (d.landing!.launchLine = "Launching soon"),
      ["landing.launchLine: must say {date} once, where the launch goes"],
    ],
    // The name is what {name} stands for.
    ["a placeholder in the name", (d) => (d.site!.name = "{year}"), ["site.name: cannot use placeholders"]],
    // A launch the calendar does not have.
    [
      "an impossible launch",
      (d) => ((d as Record<string, unknown>).launch = "2028-02-30T00:00:00Z"),
      ['launch: must be the launch instant in UTC, such as 2028-01-01T00:00:00Z, not "2028-02-30T00:00:00Z"'],
    ],
    // A launch without its time zone.
    [
      "a launch without an offset",
      (d) => ((d as Record<string, unknown>).launch = "2028-01-01T00:00:00"),
      ['launch: must be the launch instant in UTC, such as 2028-01-01T00:00:00Z, not "2028-01-01T00:00:00"'],
    ],
  ])("%s", (_name, breakIt, expected) => {
    const document = written();
    breakIt(document);
    expect(problems(document)).toEqual(expected);
  });
});

describe("the finished copy", () => {
  const document = written();
  document.launch = "2027-06-15T12:00:00Z" as never;
  document.site!.name = "Tomorrow";
  document.notFound!.returnLink = "Back to {year}";
  document.landing!.launchLine = "{date}: the launch";
  document.site!.socialImage = { tagline: "t", alt: "{name} in {year}, {date}" };
  const copy = siteContent.parse(document);

  it("describes the launch", () => {
    expect(copy.launch).toEqual({
      at: "2027-06-15T12:00:00Z",
      year: "2027",
      utc: "June 15, 2027, 12:00 UTC",
    });
  });

  it("fills in every placeholder, in nested fields too", () => {
    expect(copy.notFound.returnLink).toBe("Back to 2027");
    expect(copy.site.socialImage.alt).toBe("Tomorrow in 2027, June 15, 2027, 12:00 UTC");
  });

  it("splits the launch line where the date goes", () => {
    expect(copy.landing.launchLine).toEqual({ before: "", after: ": the launch" });
  });
});
