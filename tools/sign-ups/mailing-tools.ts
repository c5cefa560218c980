// `export --for <tool>`: the list as each mailing tool's import reads it, from its own
// documentation (tools/sign-ups/README.md walks each import and cites each guide): the columns
// it names, only those the list can fill (Kit takes an empty cell as "erase what you hold"),
// phones in E.164 where it has a phone field, ISO 8601 dates where it reads them. UTF-8 with a
// header row (csv.ts), and nothing for a spreadsheet (no `'` before a `+`): the file is the tool's.

export const MAILING_TOOLS = ["mailchimp", "brevo", "resend", "loops", "kit"] as const;
export type MailingTool = (typeof MAILING_TOOLS)[number];

/** What a mailing tool is given of a sign-up. */
export interface SignUpFields {
  email: string;
  phone: string | null;
  /** As PostgREST writes it: `2026-11-22T01:31:17.336+00:00`. */
  created_at: string;
}

interface ToolFormat {
  /** The tool's name, as the owner reads it. */
  name: string;
  /** The header row: the tool's own names for its fields. */
  columns: readonly string[];
  /** Whether one of them takes the phone (in E.164). */
  takesPhone: boolean;
  /** The row of a sign-up whose phone is already in E.164 (or null), in the columns' order. */
  row(signUp: SignUpFields, phone: string | null): string[];
}

/** `2026-11-22T01:31:17.336+00:00` → `2026-11-22`, the day in UTC. */
const utcDay = (timestamp: string) => new Date(timestamp).toISOString().slice(0, 10);

export const TOOL_FORMATS: Record<MailingTool, ToolFormat> = {
  // Mailchimp Help, "Format Guidelines for Your Import File": only the email address is required;
  // each column is matched to an audience field; the audience's own Phone Number field; a date
  // field reads YYYY-MM-DD.
  mailchimp: {
    name: "Mailchimp",
    columns: ["Email Address", "Phone Number", "Signup Date"],
    takesPhone: true,
    row: ({ email, created_at }, phone) => [email, phone ?? "", utcDay(created_at)],
  },
  // Brevo Help Center, "Format your contact import file": the attribute names as headers, EMAIL,
  // and SMS for a mobile number, with the + and the country code and no separators.
  brevo: {
    name: "Brevo",
    columns: ["EMAIL", "SMS"],
    takesPhone: true,
    row: ({ email }, phone) => [email, phone ?? ""],
  },
  // Resend, "Managing Contacts": the import maps email, first_name, last_name and unsubscribed;
  // the list has only the first (an `unsubscribed` column would re-subscribe whoever left).
  resend: { name: "Resend", columns: ["email"], takesPhone: false, row: ({ email }) => [email] },
  // Loops, "CSV Upload" and "Contact properties": the default properties by their names, Email
  // first; no phone property.
  loops: { name: "Loops", columns: ["Email"], takesPhone: false, row: ({ email }) => [email] },
  // Kit Help, "How to import a subscriber list": a column per field, the email address at least,
  // with a header row; a blank cell replaces what Kit holds, so only the email.
  kit: { name: "Kit", columns: ["email"], takesPhone: false, row: ({ email }) => [email] },
};

export interface ToolRow {
  cells: string[];
  /** What became of the sign-up's phone: none left, in E.164, unreadable (left empty), or no column for it. */
  phone: "none" | "e164" | "unreadable" | "no column";
}

/**
 * A sign-up as `tool` imports it, its phone read by `toE164` (phones.ts, which the caller loads
 * only for a tool that takes phones: its rules take a while to load).
 */
export function toolRow(
  tool: MailingTool,
  signUp: SignUpFields,
  toE164: (phone: string) => string | null,
): ToolRow {
  const format = TOOL_FORMATS[tool];
  if (signUp.phone === null) return { cells: format.row(signUp, null), phone: "none" };
  if (!format.takesPhone) return { cells: format.row(signUp, null), phone: "no column" };
  const e164 = toE164(signUp.phone);
  return { cells: format.row(signUp, e164), phone: e164 === null ? "unreadable" : "e164" };
}
