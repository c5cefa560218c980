// The chart `count` draws: one line per day (or hour), its label, its number, and a bar as long
// as its share of the largest. The numbers carry the meaning, so the chart reads the same without
// colour, in a narrow terminal, and piped into a file.

export interface ChartRow {
  /** The label when there is room (`Wed 2026-11-25`). */
  label: string;
  /** The label in a narrow terminal (`11-25`). */
  shortLabel: string;
  value: number;
}

export interface ChartOptions {
  /** The width to fit, in columns. */
  width: number;
  /** ANSI colour: only for a terminal that shows it (not piped, not NO_COLOR). */
  colour: boolean;
}

/** A bar's last cell in eighths: `▏` is one eighth of a full block, `▉` seven. */
const EIGHTHS = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
const FULL = "█";

/** Below this many columns for the bars, the short labels are used. */
const MIN_BAR_COLUMNS = 20;

/** Bars longer than this are no easier to compare, only harder to scan. */
const MAX_BAR_COLUMNS = 60;

const CYAN = (text: string) => `\u001b[36m${text}\u001b[39m`;
const DIM = (text: string) => `\u001b[2m${text}\u001b[22m`;

/** `1234` → `1,234`. */
export const formatCount = (value: number): string => value.toLocaleString("en-US");

/** A bar of `eighths` eighths of a column. */
function bar(eighths: number): string {
  return FULL.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8];
}

/**
 * The chart's lines. Bars scale to the largest value, so one huge day takes the full width; any
 * day above zero shows at least a sliver, and a day of none shows no bar, only its 0. Every line
 * fits `width` unless even the short label and the number do not.
 */
export function renderChart(rows: ChartRow[], { width, colour }: ChartOptions): string[] {
  const numbers = rows.map(({ value }) => formatCount(value));
  const numberWidth = Math.max(...numbers.map((number) => number.length));
  const room = (labels: string[]) =>
    width - Math.max(...labels.map((label) => [...label].length)) - numberWidth - 3;
  const wide = room(rows.map(({ label }) => label)) >= MIN_BAR_COLUMNS;
  const labels = rows.map((row) => (wide ? row.label : row.shortLabel));
  const labelWidth = Math.max(...labels.map((label) => [...label].length));
  const barColumns = Math.max(0, Math.min(MAX_BAR_COLUMNS, room(labels)));
  const largest = Math.max(...rows.map(({ value }) => value));
  return rows.map(({ value }, index) => {
    const eighths = value === 0 ? 0 : Math.max(1, Math.round((value / largest) * barColumns * 8));
    const head = `${labels[index]!.padEnd(labelWidth)}  ${numbers[index]!.padStart(numberWidth)}`;
    if (value === 0) return colour ? DIM(head) : head;
    return `${head} ${colour ? CYAN(bar(eighths)) : bar(eighths)}`;
  });
}
