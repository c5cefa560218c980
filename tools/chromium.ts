// How the browser tests and the bench start Chromium: Debian's build where it is installed (CI's
// machines can download nothing from outside Debian's mirrors and npm), else Playwright's own
// (`npx playwright install chromium`), with the flags a closed network and a root user need.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chromium } from "playwright";

export const SYSTEM_CHROMIUM = "/usr/bin/chromium";

export const CHROMIUM_FLAGS = [
  "--no-sandbox", // needed as root, harmless otherwise
  // Without these, Chromium's own connections at start-up stall on the closed network.
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
  "--no-first-run",
];

/**
 * Debian's Chromium, when it is there and is no stub: Ubuntu's `chromium` package installs a
 * script that only hands over to a snap. Undefined otherwise: Playwright then starts its own.
 */
export function systemChromium(): string | undefined {
  if (!existsSync(SYSTEM_CHROMIUM)) return undefined;
  const head = readFileSync(SYSTEM_CHROMIUM).subarray(0, 4096).toString("latin1");
  return /\/snap\//.test(head) ? undefined : SYSTEM_CHROMIUM;
}

/** Whether a Chromium binary starts; `lacksLibraries` when the system's libraries are missing. */
function starts(path: string): { ok: boolean; lacksLibraries: boolean } {
  const { status, stderr } = spawnSync(path, ["--version"], { encoding: "utf8", timeout: 20_000 });
  return { ok: status === 0, lacksLibraries: /error while loading shared libraries/.test(stderr ?? "") };
}

/**
 * The Chromium the browser tests will start, if one is there and starts: Debian's, else
 * Playwright's own. `lacksLibraries` when Playwright's is there but its system libraries are not.
 */
export function findChromium(): { path: string | null; lacksLibraries: boolean } {
  const system = systemChromium();
  if (system && starts(system).ok) return { path: system, lacksLibraries: false };
  const own = chromium.executablePath();
  if (!existsSync(own)) return { path: null, lacksLibraries: false };
  const { ok, lacksLibraries } = starts(own);
  return { path: ok ? own : null, lacksLibraries };
}
