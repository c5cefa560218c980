// How the build and the local commands read their settings (server/environment.ts): where the
// site sends sign-ups, and whether that is the embedded backend.
import { describe, expect, it } from "vitest";
import { ConfigurationError, port, supabaseUrl, usesLocalBackend } from "../../server/environment.ts";

describe("where the site sends sign-ups", () => {
  it.each([
    // Nothing set: the Supabase CLI's address, where `npm start` runs the embedded backend.
    [{}, "http://127.0.0.1:54321", true],
    // Only the backend moved: the build follows it.
    [{ SUPABASE_API_PORT: "60000" }, "http://127.0.0.1:60000", true],
    // Both set, and agreeing, however the host is spelled.
    [
      { SUPABASE_API_PORT: "60000", PUBLIC_SUPABASE_URL: "http://localhost:60000" },
      "http://localhost:60000",
      true,
    ],
    // A real project: the embedded backend is not used, whatever its port.
    [{ PUBLIC_SUPABASE_URL: "https://abc.supabase.co" }, "https://abc.supabase.co", false],
    [
      { PUBLIC_SUPABASE_URL: "https://abc.supabase.co", SUPABASE_API_PORT: "60000" },
      "https://abc.supabase.co",
      false,
    ],
    // Another local stack (the Supabase CLI's own, on its port) while the backend's port is not set.
    [{ PUBLIC_SUPABASE_URL: "http://127.0.0.1:55555" }, "http://127.0.0.1:55555", false],
  ])("%j → %s (embedded: %s)", (env, url, local) => {
    expect(supabaseUrl(env)).toBe(url);
    expect(usesLocalBackend(env)).toBe(local);
  });

  it.each([
    // The build would send sign-ups to a port the backend does not answer on.
    { SUPABASE_API_PORT: "60000", PUBLIC_SUPABASE_URL: "http://127.0.0.1:54321" },
    { SUPABASE_API_PORT: "60000", PUBLIC_SUPABASE_URL: "http://[::1]:60001" },
    // Not a URL at all.
    { PUBLIC_SUPABASE_URL: "abc.supabase.co" },
    // Not a port.
    { SUPABASE_API_PORT: "54321x" },
    { SUPABASE_API_PORT: "70000" },
  ])("%j is refused, saying why", (env) => {
    expect(() => supabaseUrl(env)).toThrow(ConfigurationError);
  });

  it("names both settings when they disagree", () => {
    expect(() =>
      supabaseUrl({ SUPABASE_API_PORT: "60000", PUBLIC_SUPABASE_URL: "http://127.0.0.1:54321" }),
    ).toThrow(/PUBLIC_SUPABASE_URL \(http:\/\/127\.0\.0\.1:54321\) and SUPABASE_API_PORT \(60000\) disagree/);
  });
});

describe("port numbers", () => {
  it.each([
    [undefined, 4321],
    ["8080", 8080],
    // 0 lets the system choose.
    ["0", 0],
  ])("%s → %i", (value, expected) => {
    expect(port({ PORT: value }, "PORT", 4321)).toBe(expected);
  });

  it.each(["-1", "65536", "80.5", "http"])("%s is refused", (value) => {
    expect(() => port({ PORT: value }, "PORT", 4321)).toThrow(/PORT must be a port number/);
  });
});
