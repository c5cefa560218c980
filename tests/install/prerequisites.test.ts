// What `npm test` does about Chromium, nginx and openssl before any test (tests/prerequisites/):
// from what it finds on the machine to what it installs, skips or stops on. The installing itself
// runs for real at the start of every `npm test`.
import { describe, expect, it } from "vitest";
import { commandFor, plan, type Machine, type Needs, type Step } from "../prerequisites/plan.ts";

/** A fresh Debian container, as root: apt-get, nothing installed, CI unset. */
const debianRoot: Machine = {
  platform: "linux",
  root: true,
  apt: true,
  ubuntu: false,
  chromium: null,
  chromiumLacksLibraries: false,
  nginx: false,
  openssl: true,
  ci: false,
};
const everything: Needs = { chromium: true, nginx: true };
const FOUND_ALL = { chromium: "/usr/bin/chromium", nginx: true, openssl: true };

describe.each([
  {
    // A fresh Debian container: one apt-get for Debian's Chromium and nginx (openssl is there).
    name: "Debian, root, nothing installed",
    machine: debianRoot,
    steps: [{ kind: "apt", packages: ["chromium", "nginx-light"] }],
    stop: null,
  },
  {
    // CI's machine the second time round: everything found, nothing installed.
    name: "Debian, root, everything there, CI",
    machine: { ...debianRoot, ...FOUND_ALL, ci: true },
    steps: [],
    stop: null,
  },
  {
    // Openssl missing too (a slim image): both with nginx.
    name: "Debian, root, no openssl",
    machine: { ...debianRoot, chromium: "/usr/bin/chromium", openssl: false },
    steps: [{ kind: "apt", packages: ["nginx-light", "openssl"] }],
    stop: null,
  },
  {
    // Ubuntu's `chromium` is a snap stub: Playwright's build with its libraries, nginx by apt first.
    name: "Ubuntu, root, nothing installed",
    machine: { ...debianRoot, ubuntu: true },
    steps: [
      { kind: "apt", packages: ["nginx-light"] },
      { kind: "playwright", withDeps: true },
    ],
    stop: null,
  },
  {
    // Playwright's own Chromium, already fetched, counts as found: nothing downloaded again.
    name: "Debian, root, Playwright's Chromium there, nginx there",
    machine: { ...debianRoot, chromium: "/root/.cache/ms-playwright/chromium-1/chrome", nginx: true },
    steps: [],
    stop: null,
  },
  {
    // Debian as a user: no apt-get without root, so Playwright's own build; nginx's test skipped.
    name: "Debian, a user, nothing installed",
    machine: { ...debianRoot, root: false },
    steps: [{ kind: "playwright", withDeps: false }],
    stop: null,
  },
  {
    // A Mac: Playwright's own build; no nginx, the deploy test is skipped.
    name: "macOS, nothing installed",
    machine: { ...debianRoot, platform: "darwin", root: false, apt: false },
    steps: [{ kind: "playwright", withDeps: false }],
    stop: null,
  },
  {
    // Windows: the same.
    name: "Windows, nothing installed",
    machine: { ...debianRoot, platform: "win32", root: false, apt: false },
    steps: [{ kind: "playwright", withDeps: false }],
    stop: null,
  },
  {
    // A user whose Playwright Chromium lacks its libraries: only root adds them, so the run stops.
    name: "Linux, a user, Playwright's Chromium without its libraries",
    machine: { ...debianRoot, root: false, chromiumLacksLibraries: true, nginx: true },
    steps: [],
    stop: "sudo npx playwright install-deps chromium",
  },
  {
    // The same as root on Debian: Debian's Chromium brings its own libraries.
    name: "Debian, root, Playwright's Chromium without its libraries",
    machine: { ...debianRoot, chromiumLacksLibraries: true, nginx: true },
    steps: [{ kind: "apt", packages: ["chromium"] }],
    stop: null,
  },
  {
    // CI must run the deploy test: without nginx, and no way to install it, the run stops.
    name: "macOS with CI, no nginx",
    machine: { ...debianRoot, platform: "darwin", root: false, apt: false, chromium: "/x/chrome", ci: true },
    steps: [],
    stop: "brew install nginx openssl",
  },
  {
    // A user on Debian with CI set: the command names sudo.
    name: "Debian, a user, CI, no nginx",
    machine: { ...debianRoot, root: false, chromium: "/usr/bin/chromium", ci: true },
    steps: [],
    stop: "sudo apt-get install -y nginx-light openssl",
  },
] satisfies { name: string; machine: Machine; steps: unknown[]; stop: string | null }[])(
  "$name",
  ({ machine, steps, stop }) => {
    const result = plan(machine, everything);

    it("installs what is missing, as the machine allows", () => {
      expect(result.steps).toEqual(steps);
    });

    it(stop ? "stops, naming the one command to run" : "goes on", () => {
      if (stop) expect(result.stop).toContain(`\`${stop}\``);
      else expect(result.stop).toBeNull();
    });
  },
);

describe("what the run says", () => {
  it("names what it found, one line each", () => {
    const result = plan({ ...debianRoot, ...FOUND_ALL }, everything);
    expect(result.found).toEqual(["Chromium: /usr/bin/chromium", "nginx and openssl: found"]);
  });

  it("says in one line that the deploy test is skipped without nginx, and how to run it", () => {
    const result = plan({ ...debianRoot, root: false, chromium: "/usr/bin/chromium" }, everything);
    expect(result.without).toEqual([
      "nginx: none here, so the deploy test (tests/hosting/nginx.test.ts) is skipped; `sudo apt-get install -y nginx-light openssl` runs it",
    ]);
    expect(result.stop).toBeNull();
  });
});

describe("what the run needs", () => {
  it("looks for no Chromium when no browser test runs", () => {
    expect(plan(debianRoot, { chromium: false, nginx: true }).steps).toEqual([
      { kind: "apt", packages: ["nginx-light"] },
    ]);
  });

  it("looks for no nginx when the deploy test does not run", () => {
    const result = plan({ ...debianRoot, ci: true, apt: false }, { chromium: false, nginx: false });
    expect(result).toEqual({ steps: [], found: [], without: [], stop: null });
  });
});

describe("the command a failed step names", () => {
  it.each([
    [
      { kind: "apt", packages: ["chromium", "nginx-light"] },
      "apt-get update && apt-get install -y chromium nginx-light",
    ],
    [{ kind: "playwright", withDeps: false }, "npx playwright install chromium"],
    [{ kind: "playwright", withDeps: true }, "npx playwright install --with-deps chromium"],
  ] satisfies [Step, string][])("%o: %s", (step, command) => {
    expect(commandFor(step)).toBe(command);
  });
});
