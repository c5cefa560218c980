// `export --for <tool>` (tools/sign-ups/mailing-tools.ts, phones.ts): each mailing tool's
// documented import columns, phones in E.164 as the tools that take one read them, ISO dates
// where the tool reads dates, and what the export says of the sign-ups and phones it left out.
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { SignUpRow, SignUps } from "../../tools/sign-ups/rows.ts";
import { toolCsvWriter } from "../../tools/sign-ups/csv.ts";
import {
  MAILING_TOOLS,
  TOOL_FORMATS,
  toolRow,
  type MailingTool,
} from "../../tools/sign-ups/mailing-tools.ts";
import { countryCode, toE164 } from "../../tools/sign-ups/phones.ts";
import { exportList, type ExportOptions } from "../../tools/sign-ups/verbs/export.ts";

describe("toE164", () => {
  it.each([
    // With its country code, however it is spaced and punctuated.
    ["+44 20 7946 0000", undefined, "+442079460000"],
    ["+1 (415) 555-2671", undefined, "+14155552671"],
    ["+33 6 12 34 56 78 (mobile)", undefined, "+33612345678"],
    // 00, the international prefix of most of the world.
    ["0044 20 7946 0000", undefined, "+442079460000"],
    // A national number, given the country it is dialled in; from France, 00 is international.
    ["06 12 34 56 78", "FR", "+33612345678"],
    ["(415) 555-2671", "US", "+14155552671"],
    ["0044 20 7946 0000", "FR", "+442079460000"],
    // A national number without a country is not guessed.
    ["06 12 34 56 78", undefined, null],
    // Not a number anyone can dial: too short, or a formula.
    ["555 0100", "US", null],
    ['=HYPERLINK("http://x.io","y")', undefined, null],
    ["", undefined, null],
  ] as const)("%j (from %s) → %s", (phone, country, e164) => {
    expect(toE164(phone, country)).toBe(e164);
  });

  it.each([
    ["FR", "FR"],
    ["us", "US"],
    [" gb ", "GB"],
    ["UK", null],
    ["France", null],
  ])("the country %j is %s", (typed, code) => {
    expect(countryCode(typed)).toBe(code);
  });
});

const readPhone = (phone: string) => toE164(phone);
const SIGN_UP = {
  email: "ada@example.com",
  phone: "+44 20 7946 0000",
  created_at: "2026-11-22T23:31:17.336+00:00",
};

describe.each([
  // Mailchimp's own field names, its phone field, and its date field's ISO format (the UTC day).
  {
    tool: "mailchimp",
    header: "Email Address,Phone Number,Signup Date",
    line: "ada@example.com,+442079460000,2026-11-22",
  },
  // Brevo's attribute names; SMS with the + and the country code, no separators.
  { tool: "brevo", header: "EMAIL,SMS", line: "ada@example.com,+442079460000" },
  // Resend, Loops and Kit: the email alone, as each names it; none has a phone field.
  { tool: "resend", header: "email", line: "ada@example.com" },
  { tool: "loops", header: "Email", line: "ada@example.com" },
  { tool: "kit", header: "email", line: "ada@example.com" },
] as const)("for $tool", ({ tool, header, line }) => {
  it("writes its documented columns, UTF-8 with a header row", async () => {
    const csv = await text(
      Readable.from([toolRow(tool, SIGN_UP, readPhone).cells]).pipe(
        toolCsvWriter(TOOL_FORMATS[tool].columns),
      ),
    );
    expect(csv).toBe(`${header}\r\n${line}\r\n`);
  });

  it("says what became of a phone: none, in E.164, unreadable, or no column for it", () => {
    const takesPhone = TOOL_FORMATS[tool].takesPhone;
    expect(toolRow(tool, { ...SIGN_UP, phone: null }, readPhone).phone).toBe("none");
    expect(toolRow(tool, SIGN_UP, readPhone).phone).toBe(takesPhone ? "e164" : "no column");
    expect(toolRow(tool, { ...SIGN_UP, phone: "call me" }, readPhone).phone).toBe(
      takesPhone ? "unreadable" : "no column",
    );
  });
});

it("every tool has a format", () => {
  expect(Object.keys(TOOL_FORMATS).sort()).toEqual([...MAILING_TOOLS].sort());
});

describe("export --for, in this process", () => {
  const rows: SignUpRow[] = [
    {
      id: "1",
      email: "ada@example.com",
      phone: "06 12 34 56 78",
      created_at: "2026-11-22T10:00:00+00:00",
      source: null,
      review: null,
    },
    {
      id: "2",
      email: "+bob@example.com",
      phone: null,
      created_at: "2026-11-22T11:00:00+00:00",
      source: null,
      review: null,
    },
    {
      id: "3",
      email: "cy@example.com",
      phone: "+33 6 98 76 54 32",
      created_at: "2026-11-22T12:00:00+00:00",
      source: "0123456789ab",
      review: "about 11 sign-ups per address per minute (pace: 10)",
    },
  ];
  const signUps = {
    pages: () => {
      let total: number | null = null;
      return {
        total: () => total,
        [Symbol.asyncIterator]: async function* () {
          total = rows.length;
          yield rows;
        },
      };
    },
    domainCounts: async () => [],
    repeats: async () => [],
  } as unknown as SignUps;

  async function exportFor(tool: MailingTool, options: Partial<ExportOptions> = {}) {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const out = text(stdout);
    const err = text(stderr);
    await exportList({ signUps, now: new Date(), zone: "UTC", stdout, stderr }, { for: tool, ...options });
    stdout.end();
    stderr.end();
    return { csv: await out, message: await err };
  }

  it.each([
    {
      case: "leaves out the marked, and the national phone it cannot read, saying so",
      tool: "brevo",
      options: {},
      csv: "EMAIL,SMS\r\nada@example.com,\r\n+bob@example.com,\r\n",
      message:
        "Exported 2 sign-ups for Brevo (left out 1 marked for review: list --marked shows why; --with-marked " +
        "keeps them; 1 phone not read as a number, left empty: --country <code> reads those without a country code).\n",
    },
    {
      case: "--country reads it; --with-marked keeps the marked",
      tool: "brevo",
      options: { country: "FR", withMarked: true },
      csv: "EMAIL,SMS\r\nada@example.com,+33612345678\r\n+bob@example.com,\r\ncy@example.com,+33698765432\r\n",
      message: "Exported 3 sign-ups for Brevo.\n",
    },
    {
      case: "a tool without a phone field: the phones left out, saying so",
      tool: "kit",
      options: { withMarked: true },
      csv: "email\r\nada@example.com\r\n+bob@example.com\r\ncy@example.com\r\n",
      message:
        "Exported 3 sign-ups for Kit (2 phones left out, as Kit has no phone field: plain export keeps them).\n",
    },
  ] as const)("$case", async ({ tool, options, csv, message }) => {
    expect(await exportFor(tool, options)).toEqual({ csv, message });
  });

  it("refuses a country phones do not know, before it writes anything", async () => {
    await expect(exportFor("brevo", { country: "ZZ" })).rejects.toThrow(
      "--country ZZ is no country that phones know, such as FR or US.",
    );
  });
});
