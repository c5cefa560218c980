// The Supabase CLI's version, where the documents name it, is the one tools/supabase-cli.ts pins
// (and deploy.test.ts rehearses): a new pin that leaves a document behind fails here, naming it.
import { describe, expect, it } from "vitest";
import { SUPABASE_CLI } from "../../tools/supabase-cli.ts";
import { files, read } from "./repository.ts";

const pinned = SUPABASE_CLI.split("@")[1]!;

/** `file: version` for each version a document gives the CLI ("the Supabase CLI 3.1.0", "the CLI this project pins (3.1.0)"). */
const named = files
  .filter((file) => file.endsWith(".md"))
  .flatMap((file) =>
    [
      ...read(file)
        .replace(/\s+/g, " ")
        .matchAll(/\bCLI\b[^.:;]{0,30}?\b(\d+\.\d+\.\d+)\b/g),
    ].map((match) => `${file}: ${match[1]}`),
  );

describe("the Supabase CLI's version in the documents", () => {
  it("is named where an owner reads about the deploy (the check itself works)", () => {
    expect(named).toContain(`README.md: ${pinned}`);
  });

  it(`is the pinned one, ${pinned}, wherever it is named`, () => {
    expect(named.filter((entry) => !entry.endsWith(`: ${pinned}`))).toEqual([]);
  });
});
