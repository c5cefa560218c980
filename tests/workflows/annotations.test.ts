// What the owner's command and GitHub's jobs print where the owner looks (tools/github/annotations.ts):
// under GitHub Actions, workflow commands that GitHub reads whole, whatever the message holds.
import { describe, expect, it } from "vitest";
import { ownerLine, workflowCommand } from "../../tools/github/annotations.ts";

describe("annotations", () => {
  it.each([
    // A message keeps its colons; a line break or a % would end or garble the command: escaped.
    [
      "a message on one line, titled",
      "error",
      "Paused: resume it",
      "Supabase project paused",
      "::error title=Supabase project paused::Paused: resume it",
    ],
    [
      "a line break and a % in the message",
      "warning",
      "90% used\nsee logs",
      "Disk",
      "::warning title=Disk::90%25 used%0Asee logs",
    ],
    // In a title, `:` and `,` end the property: escaped too.
    [
      "a colon and a comma in the title",
      "error",
      "m",
      "Site: down, again",
      "::error title=Site%3A down%2C again::m",
    ],
  ] as const)("%s", (_, kind, message, title, line) => {
    expect(workflowCommand(kind, message, title)).toBe(line);
  });

  it("is a plain `error: …` line outside GitHub Actions", () => {
    expect(ownerLine("error", "The project is paused.", "Supabase project paused", {})).toBe(
      "error: The project is paused.",
    );
    expect(
      ownerLine("error", "The project is paused.", "Supabase project paused", { GITHUB_ACTIONS: "true" }),
    ).toBe("::error title=Supabase project paused::The project is paused.");
  });
});
