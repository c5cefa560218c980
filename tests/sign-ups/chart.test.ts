// The chart `count` draws (tools/sign-ups/chart.ts): numbers always, bars to scale, every line
// within the terminal's width, colour only when asked.
import { stripVTControlCharacters } from "node:util";
import { describe, expect, it } from "vitest";
import { renderChart, type ChartRow } from "../../tools/sign-ups/chart";

/** Days labelled as `count` labels them. */
const days = (values: number[]): ChartRow[] =>
  values.map((value, index) => {
    const day = `2026-11-${String(index + 1).padStart(2, "0")}`;
    return { label: `Sun ${day}`, shortLabel: day.slice(5), value };
  });

/** What a terminal shows: the text without its colour codes. */
const visible = (line: string) => stripVTControlCharacters(line);
const bar = (line: string) => /[█▏▎▍▌▋▊▉]*$/u.exec(visible(line))![0];
const columns = (text: string) => [...text].length;

describe("renderChart", () => {
  it.each([
    // A phone held upright, a narrow split pane, the classic terminal, a wide one.
    [32, "11-02  1,234"],
    [40, "11-02  1,234"],
    [60, "Sun 2026-11-02  1,234"],
    [80, "Sun 2026-11-02  1,234"],
    [200, "Sun 2026-11-02  1,234"],
  ])("fits %i columns, with the labels that leave the bars room", (width, second) => {
    const lines = renderChart(days([5, 1234, 0, 87]), { width, colour: false });
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(columns(line), line).toBeLessThanOrEqual(width);
    expect(lines[1]!.startsWith(second)).toBe(true);
  });

  it("right-aligns the numbers, so that they read as a column", () => {
    const lines = renderChart(days([5, 1234, 0]), { width: 80, colour: false });
    expect(lines.map((line) => line.slice(0, 21))).toEqual([
      "Sun 2026-11-01      5",
      "Sun 2026-11-02  1,234",
      "Sun 2026-11-03      0",
    ]);
  });

  it("gives a day of none its 0 and no bar", () => {
    const lines = renderChart(days([0, 3, 0]), { width: 60, colour: false });
    expect(lines[0]).toBe("Sun 2026-11-01  0");
    expect(lines[2]).toBe("Sun 2026-11-03  0");
  });

  it("draws one huge day across the width, and still shows a day of one as a sliver", () => {
    const lines = renderChart(days([1, 1_000_000, 2]), { width: 80, colour: false });
    const full = bar(lines[1]!);
    expect(full).toMatch(/^█+$/);
    expect(columns(lines[1]!)).toBeGreaterThan(70);
    expect(bar(lines[0]!)).toBe("▏");
    expect(bar(lines[2]!)).toBe("▏");
  });

  it("draws bars in proportion, in eighths of a column", () => {
    // A 14-column label, 2 spaces, a 1-digit number, a space: 20 columns left for the largest.
    const lines = renderChart(days([8, 4, 1]), { width: 14 + 2 + 1 + 1 + 20, colour: false });
    // 4 of 8 is 10 columns; 1 of 8 is 2.5: two full blocks and a half.
    expect(lines.map(bar)).toEqual(["█".repeat(20), "█".repeat(10), "██▌"]);
  });

  it("keeps all-zero days legible (no division by zero)", () => {
    expect(renderChart(days([0, 0]), { width: 30, colour: false })).toEqual(["11-01  0", "11-02  0"]);
  });

  it("colours only when asked, and the text is the same either way", () => {
    const plain = renderChart(days([0, 7, 3]), { width: 60, colour: false });
    const coloured = renderChart(days([0, 7, 3]), { width: 60, colour: true });
    expect(plain.join("\n")).not.toContain("\u001b");
    expect(coloured.join("\n")).toContain("\u001b[");
    expect(coloured.map(visible)).toEqual(plain);
  });
});
