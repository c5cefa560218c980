// The sign-up limits' numbers stand once, in a schema file of their own; the documents link to
// that file instead of repeating them, and the rules read them from its table.
import { describe, expect, it } from "vitest";
import { locate, namedInMarkdown } from "./named-paths.ts";
import { files, read, repository } from "./repository.ts";

const LIMITS = "supabase/schemas/20_sign_up_limits.sql";

const links = files
  .filter((file) => file.endsWith(".md"))
  .flatMap((file) =>
    namedInMarkdown(read(file))
      .filter((named) => named.link && locate(named, file, repository) === LIMITS)
      .map((named) => ({ where: `${file}:${named.line}`, fragment: named.fragment })),
  );

describe("the limits' file", () => {
  it("is linked from the documents that speak of the limits, as a whole (no line that could drift)", () => {
    const linking = new Set(links.map(({ where }) => where.split(":")[0]));
    expect([...linking].sort()).toEqual(
      expect.arrayContaining(["README.md", "docs/product.md", "supabase/README.md"]),
    );
    expect(links.filter(({ fragment }) => fragment)).toEqual([]);
  });

  it("fills the table of limits, and holds none of the rules", () => {
    const schema = read(LIMITS);
    expect(schema).toMatch(/^insert into private\.sign_up_limits /m);
    expect(schema).not.toMatch(/^create (or replace )?(function|trigger|type|view)\b/m);
  });
});
