// What a test run needs from the machine beyond npm (Chromium for the browser tests, nginx and
// openssl for the deploy test), and how to get what is missing: a pure decision, from what was
// found on the machine to the steps that install the rest, or the one line that stops the run.
// tests/prerequisites/install.ts looks at the machine and carries the plan out.

/** What the run found on the machine. */
export interface Machine {
  platform: NodeJS.Platform;
  /** Running as root (uid 0): apt-get may install. */
  root: boolean;
  /** apt-get is there (Debian, Ubuntu and their kin). */
  apt: boolean;
  /** Ubuntu, whose `chromium` package is only a stub that installs a snap. */
  ubuntu: boolean;
  /** A Chromium that starts (Debian's, or Playwright's own), or null. */
  chromium: string | null;
  /** Playwright's own Chromium is there but cannot start: system libraries are missing. */
  chromiumLacksLibraries: boolean;
  nginx: boolean;
  openssl: boolean;
  /** `CI` is set: a missing nginx fails the run instead of skipping its test. */
  ci: boolean;
}

/** What this run's tests use. */
export interface Needs {
  chromium: boolean;
  nginx: boolean;
}

export type Step =
  /** `apt-get update`, then `apt-get install -y` of these packages. */
  | { kind: "apt"; packages: string[] }
  /** `playwright install chromium`, with `--with-deps` (its system libraries, through apt) as root. */
  | { kind: "playwright"; withDeps: boolean };

export interface Plan {
  /** What to install, in order. */
  steps: Step[];
  /** What was found, one line each. */
  found: string[];
  /** What the run goes on without, one line each (a test that is skipped, and why). */
  without: string[];
  /** Why the run cannot go on, naming the one command to run; the run stops before any test. */
  stop: string | null;
}

/** What installs the libraries Playwright's Chromium needs, as a user with sudo. */
export const LIBRARIES_COMMAND = "sudo npx playwright install-deps chromium";

/** The command that installs nginx and openssl on a machine like this one. */
export function nginxCommand(machine: Pick<Machine, "platform" | "apt" | "root">): string {
  if (machine.platform === "darwin") return "brew install nginx openssl";
  if (machine.apt) return `${machine.root ? "" : "sudo "}apt-get install -y nginx-light openssl`;
  return "install nginx and openssl with the system's package manager";
}

export function plan(machine: Machine, needs: Needs): Plan {
  const result: Plan = { steps: [], found: [], without: [], stop: null };
  // Root with apt on Linux: a container or CI's machine, where the run may install system packages.
  const aptAsRoot = machine.platform === "linux" && machine.root && machine.apt;
  const aptPackages: string[] = [];

  if (needs.chromium) {
    if (machine.chromium) result.found.push(`Chromium: ${machine.chromium}`);
    // Playwright's build without its libraries: only root can add them.
    else if (machine.chromiumLacksLibraries && !aptAsRoot)
      result.stop = `Chromium cannot start, its system libraries are missing: run \`${LIBRARIES_COMMAND}\``;
    // Debian's own build: what CI uses, and no download from outside Debian's mirrors.
    else if (aptAsRoot && !machine.ubuntu) aptPackages.push("chromium");
    // Ubuntu's `chromium` is a stub that needs snapd: Playwright's build, and its libraries by apt.
    else if (aptAsRoot) result.steps.push({ kind: "playwright", withDeps: true });
    // A laptop, or Linux as a user: Playwright's own build, into the user's cache.
    else result.steps.push({ kind: "playwright", withDeps: false });
  }

  if (needs.nginx) {
    const missing = [...(machine.nginx ? [] : ["nginx-light"]), ...(machine.openssl ? [] : ["openssl"])];
    if (!missing.length) result.found.push("nginx and openssl: found");
    else if (aptAsRoot) aptPackages.push(...missing);
    else if (machine.ci)
      result.stop = `nginx or openssl is missing, and CI must run the deploy test: run \`${nginxCommand(machine)}\``;
    else
      result.without.push(
        `nginx: none here, so the deploy test (tests/hosting/nginx.test.ts) is skipped; \`${nginxCommand(machine)}\` runs it`,
      );
  }

  // One apt step for everything, before Playwright's (whose --with-deps uses apt too).
  if (aptPackages.length) result.steps.unshift({ kind: "apt", packages: aptPackages });
  return result;
}

/** The one command that does a step by hand, for the line that stops the run when it failed. */
export function commandFor(step: Step): string {
  if (step.kind === "apt") return `apt-get update && apt-get install -y ${step.packages.join(" ")}`;
  return `npx playwright install${step.withDeps ? " --with-deps" : ""} chromium`;
}
