// What the owner's command says when a call fails (tools/sign-ups/failures.ts): what happened, and
// what to do, a paused project above all, which otherwise looks like any failure.
import { createClient, type PostgrestError } from "@supabase/supabase-js";
import { describe, expect, it } from "vitest";
import { ConfigurationError, port } from "../../config/environment.ts";
import { describeFailure, oneLine, OwnerCommandError, titleOf } from "../../tools/sign-ups/failures.ts";
import { checkSignUpPath } from "../../tools/sign-ups/probe.ts";
import { DEPLOY_COMMAND } from "../../tools/supabase-cli.ts";

const target = (url: string, role: "service_role" | "anon" = "service_role") => ({
  url,
  keySource: role === "anon" ? "PUBLIC_SUPABASE_PUBLISHABLE_KEY" : "SUPABASE_SECRET_KEY",
  role,
});
const error = (fields: Partial<PostgrestError>) =>
  ({ message: "", details: "", hint: "", code: "", ...fields }) as PostgrestError;

/** supabase-js's error when fetch itself fails, as it reports a cause. */
const fetchFailed = (cause: string) =>
  error({
    message: "TypeError: fetch failed",
    details: `TypeError: fetch failed\n\nCaused by: Error: ${cause}\n    at …`,
  });

describe("describeFailure", () => {
  it.each([
    {
      case: "a paused hosted project (HTTP 540): paused, and where to resume it",
      title: "Supabase project paused",
      url: "https://abcdefghijklmnop.supabase.co",
      status: 540,
      error: error({ message: "Project paused" }),
      message:
        "The project at https://abcdefghijklmnop.supabase.co is paused (HTTP 540): it answers nothing, sign-ups " +
        "from the page included. Resume it at https://supabase.com/dashboard/project/abcdefghijklmnop " +
        "(Resume project): its data and settings come back. Supabase pauses Free-plan projects after 7 days of low activity.",
    },
    {
      case: "a hosted project's address that no longer resolves: maybe paused or deleted",
      title: "Supabase project not found",
      url: "https://abcdefghijklmnop.supabase.co",
      status: 0,
      error: fetchFailed("getaddrinfo ENOTFOUND abcdefghijklmnop.supabase.co (ENOTFOUND)"),
      message:
        "Cannot reach the Supabase API at https://abcdefghijklmnop.supabase.co (getaddrinfo ENOTFOUND " +
        "abcdefghijklmnop.supabase.co). If the address is right, the project may be paused or deleted: see " +
        "https://supabase.com/dashboard/project/abcdefghijklmnop.",
    },
    {
      case: "another host's address that does not resolve: no word of Supabase's pausing",
      title: "Supabase unreachable",
      url: "https://db.example.com",
      status: 0,
      error: fetchFailed("getaddrinfo ENOTFOUND db.example.com (ENOTFOUND)"),
      message:
        "Cannot reach the Supabase API at https://db.example.com (getaddrinfo ENOTFOUND db.example.com).",
    },
    {
      case: "a refused connection: the cause alone",
      title: "Supabase unreachable",
      url: "http://127.0.0.1:54321",
      status: 0,
      error: fetchFailed("connect ECONNREFUSED 127.0.0.1:54321 (ECONNREFUSED)"),
      message:
        "Cannot reach the Supabase API at http://127.0.0.1:54321 (connect ECONNREFUSED 127.0.0.1:54321).",
    },
    {
      case: "no answer within watch's time limit",
      title: "Supabase unreachable",
      url: "https://abcdefghijklmnop.supabase.co",
      status: 0,
      error: error({ message: "TimeoutError: The operation was aborted due to timeout" }),
      message: "Cannot reach the Supabase API at https://abcdefghijklmnop.supabase.co (no answer in time).",
    },
    {
      case: "a server error: the status, the body's first words on one line, and where to look",
      title: "Supabase answered 500",
      url: "https://abcdefghijklmnop.supabase.co",
      status: 500,
      error: error({ message: "<html>\n  <body>Internal\n\nServer Error</body>\n</html>" }),
      message:
        "The API at https://abcdefghijklmnop.supabase.co answered 500: <html> <body>Internal Server Error</body> " +
        "</html>. The failure is on the project's side: see its logs at " +
        "https://supabase.com/dashboard/project/abcdefghijklmnop, and https://status.supabase.com; try again later.",
    },
    {
      case: "the page's key refused: where to get the publishable key, and that the site needs it too",
      title: "Publishable key refused",
      url: "https://abcdefghijklmnop.supabase.co",
      role: "anon" as const,
      status: 401,
      error: error({ message: "Invalid API key" }),
      message:
        "The API at https://abcdefghijklmnop.supabase.co refused the key from PUBLIC_SUPABASE_PUBLISHABLE_KEY as " +
        "invalid, as it refuses the page's sign-ups if the site was built with it: copy the project's publishable " +
        "key (sb_publishable_…) from the dashboard, Project Settings → API Keys, into the site's build settings " +
        "(and build again) and this job's.",
    },
    {
      case: "the page's role without its grant: the grant to give back",
      title: "Page may not sign up",
      url: "https://abcdefghijklmnop.supabase.co",
      role: "anon" as const,
      status: 401,
      error: error({ code: "42501", message: "permission denied for table early_access" }),
      message:
        "The key from PUBLIC_SUPABASE_PUBLISHABLE_KEY may not add a sign-up at https://abcdefghijklmnop.supabase.co " +
        "(permission denied for table early_access): every sign-up from the page fails. Grant it back in the SQL " +
        "editor as supabase/schemas/10_early_access.sql does: grant insert (email, phone), select on table " +
        "public.early_access to anon, authenticated;",
    },
  ])("$case", ({ url, status, error, message, title, ...rest }) => {
    const role = "role" in rest ? rest.role : undefined;
    const failure = describeFailure(error, status, target(url, role));
    expect(failure.message).toBe(message);
    expect(failure.title, "the title GitHub shows on the run's page").toBe(title);
  });
});

describe("the watch's probe of the page's path", () => {
  it("answered anything but the check's refusal: to check the migrations, with the deploy command", async () => {
    // What an endpoint answers that refuses the request before the database sees it.
    const answer = { code: "PT400", message: "The client's address is unknown", details: null, hint: null };
    const fetch: typeof globalThis.fetch = async () =>
      new Response(JSON.stringify(answer), { status: 400, headers: { "content-type": "application/json" } });
    const url = "https://abcdefghijklmnop.supabase.co";
    const page = createClient(url, "sb_publishable_x", {
      auth: { persistSession: false },
      global: { fetch },
    });
    const probe = checkSignUpPath(page, { url, keySource: "PUBLIC_SUPABASE_PUBLISHABLE_KEY" });
    await expect(probe).rejects.toThrow(
      "The page's sign-up path at https://abcdefghijklmnop.supabase.co answered 400 PT400: The client's address " +
        "is unknown, where the database should refuse the test address with 400 (early_access_email_check): check " +
        `that this repository's migrations are all applied (${DEPLOY_COMMAND} --dry-run lists any missing).`,
    );
    await expect(probe).rejects.toMatchObject({ title: "Page's sign-up path broken" });
  });
});

describe("any failure, as the owner reads it", () => {
  /** What `port` throws for a setting that is no port. */
  const setting = () => {
    try {
      port({ SUPABASE_API_PORT: "abc" }, "SUPABASE_API_PORT", 54321);
    } catch (error) {
      return error;
    }
    throw new Error("port() took abc");
  };

  it.each([
    {
      case: "a setting that makes no sense: titled as such, its lines on one",
      error: new ConfigurationError(
        "PUBLIC_SUPABASE_URL and SUPABASE_API_PORT disagree.\nSet them to one port.",
      ),
      title: "Settings refused",
      line: "PUBLIC_SUPABASE_URL and SUPABASE_API_PORT disagree. Set them to one port.",
    },
    {
      case: "a setting as the settings refuse it",
      error: setting(),
      title: "Settings refused",
      line: 'SUPABASE_API_PORT must be a port number (0–65535), not "abc".',
    },
    {
      case: "the command's own: its title",
      error: new OwnerCommandError(
        "The project at https://x.supabase.co is paused.",
        "Supabase project paused",
      ),
      title: "Supabase project paused",
      line: "The project at https://x.supabase.co is paused.",
    },
    {
      case: "anything else: a title of the command's, and the error as it came",
      error: new TypeError("Cannot read properties of undefined (reading 'split')"),
      title: "The owner's command failed",
      line: "TypeError: Cannot read properties of undefined (reading 'split')",
    },
  ])("$case", ({ error, title, line }) => {
    expect({ title: titleOf(error), line: oneLine(error) }).toEqual({ title, line });
  });
});
