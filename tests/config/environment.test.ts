// How the build and the local commands read their settings (config/environment.ts): where the
// site sends sign-ups, whether that is the local Supabase, and the site's own address.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LOCAL_SECRET_KEY } from "../../config/local-supabase.ts";
import {
  LEGACY_ANON_KEY as LOCAL_ANON_KEY,
  LEGACY_SERVICE_ROLE_KEY as LOCAL_SERVICE_ROLE_KEY,
} from "../support/legacy-keys.ts";
import {
  ConfigurationError,
  LOCAL_SITE_URL,
  port,
  refuseSecretKeysInPublicVariables,
  siteUrl,
  supabaseUrl,
  usesLocalSupabase,
} from "../../config/environment.ts";
import { LOCAL_PUBLISHABLE_KEY } from "../../config/local-supabase.ts";
import { packageBin } from "../../tools/processes.ts";

describe("where the site sends sign-ups", () => {
  it.each([
    // Nothing set: the Supabase CLI's address, where `npm start` runs the local Supabase.
    [{}, "http://127.0.0.1:54321", true],
    // Only the backend moved: the build follows it.
    [{ SUPABASE_API_PORT: "60000" }, "http://127.0.0.1:60000", true],
    // Both set, and agreeing, however the host is spelled.
    [
      { SUPABASE_API_PORT: "60000", PUBLIC_SUPABASE_URL: "http://localhost:60000" },
      "http://localhost:60000",
      true,
    ],
    // A real project: the local Supabase is not used, whatever its port.
    [{ PUBLIC_SUPABASE_URL: "https://abc.supabase.co" }, "https://abc.supabase.co", false],
    [
      { PUBLIC_SUPABASE_URL: "https://abc.supabase.co", SUPABASE_API_PORT: "60000" },
      "https://abc.supabase.co",
      false,
    ],
    // Another local stack (the Supabase CLI's own, on its port) while the backend's port is not set.
    [{ PUBLIC_SUPABASE_URL: "http://127.0.0.1:55555" }, "http://127.0.0.1:55555", false],
  ])("%j → %s (local Supabase: %s)", (env, url, local) => {
    expect(supabaseUrl(env)).toBe(url);
    expect(usesLocalSupabase(env)).toBe(local);
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

describe("the site's own address", () => {
  const REAL_PROJECT = { PUBLIC_SUPABASE_URL: "https://abc.supabase.co" };

  it.each([
    // Set: taken as it is, whatever the build.
    [{ SITE_URL: "https://future.example" }, true, "https://future.example"],
    [{ ...REAL_PROJECT, SITE_URL: "https://future.example/" }, true, "https://future.example/"],
    // Not set, and sign-ups stay on this machine: the local address.
    [{}, true, LOCAL_SITE_URL],
    [{ SUPABASE_API_PORT: "60000" }, true, LOCAL_SITE_URL],
    // The Supabase CLI's own stack, on another port: still this machine.
    [{ PUBLIC_SUPABASE_URL: "http://127.0.0.1:55555" }, true, LOCAL_SITE_URL],
    // Not a build (the dev server, astro check): the local address, whatever the project.
    [REAL_PROJECT, false, LOCAL_SITE_URL],
  ])("%j, building: %s → %s", (env, building, expected) => {
    expect(siteUrl(env, { building })).toBe(expected);
  });

  it("is required by a build for a Supabase project elsewhere, which is told what to set and where", () => {
    expect(() => siteUrl({ PUBLIC_SUPABASE_URL: "https://abc.supabase.co" }, { building: true })).toThrow(
      /^SITE_URL is not set, and this build sends sign-ups to https:\/\/abc\.supabase\.co: .+ would point at http:\/\/localhost:4321\.\nSet SITE_URL to the site's public address, such as https:\/\/example\.com: in \.env, or in the host's build settings/,
    );
  });

  it.each(["future.example", "ftp://future.example"])("%j is refused", (value) => {
    expect(() => siteUrl({ SITE_URL: value })).toThrow(ConfigurationError);
  });

  it("a real `astro build` without it stops before writing anything, with that message", () => {
    const outDir = mkdtempSync(join(tmpdir(), "build-without-site-url-"));
    try {
      const build = spawnSync(process.execPath, [packageBin("astro"), "build", "--outDir", outDir], {
        // Empty counts as unset, whatever .env says.
        env: { ...process.env, PUBLIC_SUPABASE_URL: "https://abc.supabase.co", SITE_URL: "" },
        encoding: "utf8",
      });
      expect(build.status).not.toBe(0);
      expect(build.stdout + build.stderr).toContain("Set SITE_URL to the site's public address");
      expect(existsSync(join(outDir, "index.html"))).toBe(false);
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("secret keys in PUBLIC_ variables", () => {
  it.each([
    // The keys a page may carry.
    [{ PUBLIC_SUPABASE_PUBLISHABLE_KEY: LOCAL_PUBLISHABLE_KEY }],
    [{ PUBLIC_SUPABASE_PUBLISHABLE_KEY: LOCAL_ANON_KEY }],
    // The secret key where it belongs, which the build never reads.
    [{ SUPABASE_SECRET_KEY: LOCAL_SECRET_KEY }],
    // Not keys at all.
    [{ PUBLIC_SUPABASE_URL: "https://abc.supabase.co", PUBLIC_NOTE: "a.b.c" }],
  ])("%j is accepted", (env) => {
    expect(() => refuseSecretKeysInPublicVariables(env)).not.toThrow();
  });

  it.each([
    // Today's secret key, in the variable meant for the publishable one, or any other.
    [{ PUBLIC_SUPABASE_PUBLISHABLE_KEY: LOCAL_SECRET_KEY }, "PUBLIC_SUPABASE_PUBLISHABLE_KEY holds"],
    [{ PUBLIC_ADMIN_KEY: "sb_secret_anything" }, "PUBLIC_ADMIN_KEY holds"],
    // A legacy service_role JWT, signed or not: what it claims is what matters.
    [{ PUBLIC_SUPABASE_PUBLISHABLE_KEY: LOCAL_SERVICE_ROLE_KEY }, "PUBLIC_SUPABASE_PUBLISHABLE_KEY holds"],
    [
      { PUBLIC_A: LOCAL_SECRET_KEY, PUBLIC_B: `x.${btoa('{"role":"service_role"}')}.y` },
      "PUBLIC_A and PUBLIC_B hold",
    ],
  ])("%j is refused, naming the variable but not the key", (env, named) => {
    let message = "";
    try {
      refuseSecretKeysInPublicVariables(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      message = (error as Error).message;
    }
    expect(message).toContain(`${named} a secret key`);
    expect(message).toContain("SUPABASE_SECRET_KEY");
    for (const value of Object.values(env)) expect(message).not.toContain(value);
  });

  it("a real `astro build` with one stops before writing anything", () => {
    const outDir = mkdtempSync(join(tmpdir(), "build-with-secret-key-"));
    try {
      const build = spawnSync(process.execPath, [packageBin("astro"), "build", "--outDir", outDir], {
        env: { ...process.env, PUBLIC_SUPABASE_PUBLISHABLE_KEY: LOCAL_SECRET_KEY },
        encoding: "utf8",
      });
      expect(build.status).not.toBe(0);
      expect(build.stdout + build.stderr).toContain("PUBLIC_SUPABASE_PUBLISHABLE_KEY holds a secret key");
      expect(build.stdout + build.stderr).not.toContain(LOCAL_SECRET_KEY);
      expect(existsSync(join(outDir, "index.html"))).toBe(false);
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
  }, 60_000);
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
