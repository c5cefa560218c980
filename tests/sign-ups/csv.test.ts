// The owner's export (tools/sign-ups/csv.ts): RFC 4180, and no cell a spreadsheet would run.
import { Readable } from "node:stream";
import { buffer, text } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import { csvWriter, neutralizeCell, toUtcIso, type CsvRecord } from "../../tools/sign-ups/csv";

describe("neutralizeCell", () => {
  it.each([
    // Formulas, as an attacker types them into the free-text phone or an address's local part.
    ['=HYPERLINK("http://x.io","y")', `'=HYPERLINK("http://x.io","y")`],
    ["+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"],
    ["-2+3", "'-2+3"],
    ["@SUM(A1:A9)", "'@SUM(A1:A9)"],
    ["=cmd@example.com", "'=cmd@example.com"],
    // A tab, carriage return or line feed first can shift a cell into a formula.
    ["\t=1", "'\t=1"],
    ["\r=1", "'\r=1"],
    ["\n=1", "'\n=1"],
    // Full-width forms, which some spreadsheets read as the ASCII ones.
    ["＝1+1", "'＝1+1"],
    // An international phone number: shown as text, not evaluated (Excel would show an error).
    ["+44 20 7946 0000", "'+44 20 7946 0000"],
    // Nothing to do: the character is not first, or is harmless.
    ["ada@example.com", "ada@example.com"],
    ["555 = home", "555 = home"],
    ["'quoted", "'quoted"],
    ["", ""],
  ])("%j → %j", (value, expected) => {
    expect(neutralizeCell(value)).toBe(expected);
  });
});

describe("csvWriter", () => {
  const write = (records: CsvRecord[], options?: { bom?: boolean }) =>
    text(Readable.from(records).pipe(csvWriter(options)));

  const unmarked = { source: null, review: null };

  it("writes a header, every field quoted, quotes doubled, CRLF, an absent phone, source and review empty", async () => {
    const csv = await write([
      {
        email: "ada@example.com",
        phone: 'ext. "12", 1;2',
        created_at: "2026-11-22T01:31:17.336Z",
        ...unmarked,
      },
      { email: "bob@example.com", phone: null, created_at: "2026-11-22T01:31:18Z", ...unmarked },
      {
        email: "-cy@example.com",
        phone: '=HYPERLINK("http://x.io","y")',
        created_at: "2026-11-22T01:31:19Z",
        source: "3f9c2a71b0d4",
        review: "11 sign-ups per address per minute (pace: 10)",
      },
    ]);
    expect(csv).toBe(
      '"email","phone","created_at","source","review"\r\n' +
        '"ada@example.com","ext. ""12"", 1;2","2026-11-22T01:31:17.336Z",,\r\n' +
        '"bob@example.com",,"2026-11-22T01:31:18Z",,\r\n' +
        `"'-cy@example.com","'=HYPERLINK(""http://x.io"",""y"")","2026-11-22T01:31:19Z",` +
        `"3f9c2a71b0d4","11 sign-ups per address per minute (pace: 10)"\r\n`,
    );
  });

  it("writes the header alone when there is nobody", async () => {
    expect(await write([])).toBe('"email","phone","created_at","source","review"\r\n');
  });

  it("starts with a byte-order mark when asked, for Excel", async () => {
    // Read as bytes: a text decoder would drop the mark.
    const bytes = await buffer(Readable.from([]).pipe(csvWriter({ bom: true })));
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(bytes.subarray(3).toString()).toBe('"email","phone","created_at","source","review"\r\n');
  });
});

describe("toUtcIso", () => {
  it.each([
    // As PostgREST writes it from a database in UTC.
    ["2026-11-22T01:31:17.336+00:00", "2026-11-22T01:31:17.336Z"],
    // Microseconds are kept, not rounded to milliseconds.
    ["2026-11-22T01:31:17.336123+00:00", "2026-11-22T01:31:17.336123Z"],
    // No fraction.
    ["2026-11-22T01:31:17+00:00", "2026-11-22T01:31:17Z"],
    // A database in another time zone: turned into UTC, across midnight too.
    ["2026-11-22T01:31:17.5+02:00", "2026-11-21T23:31:17.5Z"],
    ["2026-11-21T20:00:00-05:30", "2026-11-22T01:30:00Z"],
  ])("%s → %s", (timestamp, expected) => {
    expect(toUtcIso(timestamp)).toBe(expected);
  });

  it("refuses a timestamp without a zone", () => {
    expect(() => toUtcIso("2026-11-22 01:31:17")).toThrow(/Not a timestamp with a time zone/);
  });
});
