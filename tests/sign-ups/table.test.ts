// The `list` table (tools/sign-ups/table.ts): aligned, and nothing a terminal would act on.
import { describe, expect, it } from "vitest";
import { formatTable, terminalSafe } from "../../tools/sign-ups/table";

describe("terminalSafe", () => {
  it.each([
    ["ada@example.com", "ada@example.com"],
    // An escape sequence that would clear the screen or recolour the rest.
    ["\u001b[2Jx", "\\u{1b}[2Jx"],
    // A right-to-left override that would show the line backwards.
    ["\u202eevil", "\\u{202e}evil"],
    ["a\nb", "a\\u{a}b"],
    // Letters of any script are text.
    ["Zoë 東京", "Zoë 東京"],
  ])("%j → %j", (text, expected) => {
    expect(terminalSafe(text)).toBe(expected);
  });
});

describe("formatTable", () => {
  it("pads every column but the last to its widest cell, two spaces apart", () => {
    expect(
      formatTable(
        ["WHEN", "EMAIL", "PHONE"],
        [
          ["2026-11-22 14:03", "ada@example.com", "555"],
          ["2026-11-21 09:00", "zoë@example.com", ""],
        ],
      ),
    ).toBe(
      [
        "WHEN              EMAIL            PHONE",
        "2026-11-22 14:03  ada@example.com  555",
        "2026-11-21 09:00  zoë@example.com  ",
      ].join("\n"),
    );
  });
});
