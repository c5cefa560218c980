// The lock must install on every machine people build on, not only on this one: `npm ci`
// reads it as-is, and a native package whose platform binary is missing from it breaks the
// build on that platform ("Cannot find native binding"). So every platform binary a package
// asks for must be in the lock, in exactly the version it asks for.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

interface LockedPackage {
  version: string;
  os?: string[];
  cpu?: string[];
  optionalDependencies?: Record<string, string>;
}

const lock = JSON.parse(readFileSync(new URL("../../package-lock.json", import.meta.url), "utf8")) as {
  packages: Record<string, LockedPackage>;
};

/** The platforms people build this site on; each native package must have a binary for each. */
const REQUIRED_PLATFORMS = ["darwin-arm64", "darwin-x64", "linux-x64", "linux-arm64", "win32-x64"];

/** Where Node would find `name` from the package at `from`: its own node_modules, then upwards. */
function resolve(from: string, name: string): LockedPackage | undefined {
  for (let base = from; ; base = base.slice(0, Math.max(0, base.lastIndexOf("/node_modules/")))) {
    const found = lock.packages[`${base ? `${base}/` : ""}node_modules/${name}`];
    if (found || base === "") return found;
  }
}

const isPlatformBinary = (entry: LockedPackage | undefined) => Boolean(entry?.os || entry?.cpu);

/**
 * Packages that ship one binary per platform as optional dependencies, with what they ask for.
 * A binary's own optional dependencies (sharp's libvips) and a lone macOS-only helper (vite's
 * fsevents) are not such a set.
 */
const nativePackages = Object.entries(lock.packages).flatMap(([path, entry]) => {
  if (isPlatformBinary(entry)) return [];
  const binaries = Object.entries(entry.optionalDependencies ?? {}).map(([name, wanted]) => ({
    name,
    wanted,
    locked: resolve(path, name),
  }));
  // The lock marks binaries by os/cpu; one that went missing is still listed by its package, and
  // counts too: a version the registry has for this machine's platform alone locks one binary
  // and leaves the others out (the Supabase CLI 3.1.0 did, so it runs through npx, outside the
  // lock: tools/supabase-cli.ts), which must fail below, not pass unseen.
  const inTheSet = binaries.filter(({ locked }) => !locked || isPlatformBinary(locked));
  return inTheSet.length > 1 ? [{ path, binaries }] : [];
});

describe("package-lock.json", () => {
  it("has native packages to check (the check itself still works)", () => {
    expect(nativePackages.map(({ path }) => path)).toEqual(
      expect.arrayContaining([
        "node_modules/@tailwindcss/oxide",
        "node_modules/lightningcss",
        "node_modules/esbuild",
      ]),
    );
  });

  describe.each(nativePackages)("$path", ({ binaries }) => {
    it("locks every platform binary it asks for, in exactly that version", () => {
      const wrong = binaries
        .filter(({ wanted, locked }) => !locked || (/^\d/.test(wanted) && locked.version !== wanted))
        .map(({ name, wanted, locked }) => `${name}@${wanted} (locked: ${locked?.version ?? "missing"})`);
      expect(wrong, `platform binaries missing from the lock or in another version`).toEqual([]);
    });

    it.each(REQUIRED_PLATFORMS)("has a binary for %s", (platform) => {
      const [os, cpu] = platform.split("-");
      const found = binaries.some(
        ({ locked }) => locked?.os?.includes(os!) && (!locked.cpu || locked.cpu.includes(cpu!)),
      );
      expect(found, `no ${platform} binary locked`).toBe(true);
    });
  });
});
