// The `list` verb's table: columns padded to their widest cell, two spaces apart, and nothing
// in a cell that a terminal would act on.

/**
 * Control and format characters (an escape sequence, a right-to-left override) shown as
 * `\u{…}`: the database refuses them in new rows, but rows from before its rules may hold them.
 */
export function terminalSafe(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}]/gu, (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`);
}

/** A header and rows as aligned text, one line each; the last column is not padded. */
export function formatTable(header: string[], rows: string[][]): string {
  const lines = [header, ...rows].map((cells) => cells.map(terminalSafe));
  const widths = header.map((_, column) => Math.max(...lines.map((cells) => [...cells[column]!].length)));
  return lines
    .map((cells) =>
      cells
        .map((cell, column) =>
          column === cells.length - 1 ? cell : cell + " ".repeat(widths[column]! - [...cell].length),
        )
        .join("  "),
    )
    .join("\n");
}
