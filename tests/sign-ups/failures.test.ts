// What the owner's command says when a call fails (tools/sign-ups/client.ts): what happened, and
// what to do, a paused project above all, which otherwise looks like any failure.
import type { PostgrestError } from "@supabase/supabase-js";
import { describe, expect, it } from "vitest";
import { describeFailure } from "../../tools/sign-ups/client";

const target = (url: string) => ({ url, keySource: "SUPABASE_SECRET_KEY" });
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
      url: "https://db.example.com",
      status: 0,
      error: fetchFailed("getaddrinfo ENOTFOUND db.example.com (ENOTFOUND)"),
      message:
        "Cannot reach the Supabase API at https://db.example.com (getaddrinfo ENOTFOUND db.example.com).",
    },
    {
      case: "a refused connection: the cause alone",
      url: "http://127.0.0.1:54321",
      status: 0,
      error: fetchFailed("connect ECONNREFUSED 127.0.0.1:54321 (ECONNREFUSED)"),
      message:
        "Cannot reach the Supabase API at http://127.0.0.1:54321 (connect ECONNREFUSED 127.0.0.1:54321).",
    },
  ])("$case", ({ url, status, error, message }) => {
    expect(describeFailure(error, status, target(url)).message).toBe(message);
  });
});
