// The sign-up limits' numbers stand once, in the schema's table of limits; the documents link to
// its lines instead of repeating them. Each such link must name exactly that statement's lines,
// however the file around it changes.
import { describe, expect, it } from "vitest";
import { lineRange, locate, namedInMarkdown } from "./named-paths.ts";
import { files, read, repository } from "./repository.ts";

const SCHEMA = "supabase/schemas/20_sign_up_limits.sql";

/** The lines of the statement that fills the table of limits, `#L<first>-L<last>`. */
function tableOfLimits(): string {
  const lines = read(SCHEMA).split("\n");
  const first = lines.findIndex((line) => line.startsWith("insert into private.sign_up_limits"));
  const last = lines.findIndex((line, index) => index >= first && line.trimEnd().endsWith(";"));
  expect(first, `the insert into private.sign_up_limits in ${SCHEMA}`).toBeGreaterThanOrEqual(0);
  return `L${first + 1}-L${last + 1}`;
}

const links = files
  .filter((file) => file.endsWith(".md"))
  .flatMap((file) =>
    namedInMarkdown(read(file))
      .filter((named) => named.link && locate(named, file, repository) === SCHEMA)
      .map((named) => ({ where: `${file}:${named.line}`, fragment: named.fragment })),
  );

describe("the links to the table of limits", () => {
  it("stand in the documents that speak of the limits", () => {
    const linking = new Set(links.map(({ where }) => where.split(":")[0]));
    expect([...linking].sort()).toEqual(
      expect.arrayContaining(["README.md", "docs/product.md", "supabase/README.md"]),
    );
  });

  it.each(links)("$where names its lines", ({ fragment }) => {
    expect(lineRange(fragment), "a #L…-L… fragment").not.toBeNull();
    expect(`#${fragment}`).toBe(`#${tableOfLimits()}`);
  });
});
