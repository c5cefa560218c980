// How the browser tests and the bench start Chromium: Debian's build where it is installed (CI's
// machines can download nothing from outside Debian's mirrors and npm), else Playwright's own
// (`npx playwright install chromium`), with the flags a closed network and a root user need.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
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
 * The features Playwright turns off in every Chromium it starts (its chromiumSwitches.ts, in
 * 1.65). Chromium reads only the last --disable-features, so a list of the tests' own replaces
 * this one unless it repeats it: TEST_CHROMIUM_FLAGS does (tests/site/browser/chromium.spec.ts
 * checks that none is lost when Playwright's list changes).
 */
const PLAYWRIGHT_DISABLED_FEATURES = [
  "AvoidUnnecessaryBeforeUnloadCheckSync",
  "DestroyProfileOnBrowserClose",
  "HttpsUpgrades",
  "HttpsFirstBalancedModeAutoEnable",
  "LensOverlay",
  "MediaRouter",
  "PaintHolding",
  "ThirdPartyStoragePartitioning",
  "AvoidCorsURLLoaderRestartOnRedirect",
  "TcpPortRandomizationWin",
  "OptimizationHints",
  "NetworkTimeServiceQuerying",
  "AimEnabled",
  "PreconnectToSearch",
  "msForceBrowserSignIn",
  "msEdgeUpdateLaunchServicesPreferredVersion",
];

/**
 * The browser tests' flags: CHROMIUM_FLAGS, and off what each test's window starts and never
 * uses, beside its page (each test has a context, and so a window, of its own): the address
 * bar's two dropdowns, WebUI pages in a renderer of their own, and the spare renderer Chromium
 * keeps started for a next navigation, which the next test's context cannot use. Two of every
 * three renderers a test started: half of what a page's load costs in CPU, a quarter of the
 * browser tests'. Nothing of a page changes.
 */
export const TEST_CHROMIUM_FLAGS = [
  ...CHROMIUM_FLAGS,
  `--disable-features=${[
    ...PLAYWRIGHT_DISABLED_FEATURES,
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
    "SpareRendererForSitePerProcess",
  ].join(",")}`,
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
 * Playwright's own headless shell, which it starts for headless tests (`playwright install
 * chromium` fetches it beside the full browser; `--only-shell` fetches it alone), if it is there:
 * `<browsers>/chromium_headless_shell-<revision>/<platform's folder>/chrome-headless-shell`.
 */
function playwrightHeadlessShell(): string | null {
  // <browsers>/chromium-<revision>/<platform's folder>/<executable>
  const browsers = dirname(dirname(dirname(chromium.executablePath())));
  const revision = /chromium-(\d+)$/.exec(dirname(dirname(chromium.executablePath())))?.[1];
  const folder = join(browsers, `chromium_headless_shell-${revision}`);
  if (!revision || !existsSync(folder)) return null;
  for (const platform of readdirSync(folder)) {
    for (const name of ["chrome-headless-shell", "chrome-headless-shell.exe"]) {
      if (existsSync(join(folder, platform, name))) return join(folder, platform, name);
    }
  }
  return null;
}

/**
 * The Chromium the browser tests will start, if one is there and starts: Debian's, else
 * Playwright's own (its headless shell, or its full browser). `lacksLibraries` when Playwright's
 * is there but its system libraries are not.
 */
export function findChromium(): { path: string | null; lacksLibraries: boolean } {
  const system = systemChromium();
  if (system && starts(system).ok) return { path: system, lacksLibraries: false };
  const own = playwrightHeadlessShell() ?? chromium.executablePath();
  if (!existsSync(own)) return { path: null, lacksLibraries: false };
  const { ok, lacksLibraries } = starts(own);
  return { path: ok ? own : null, lacksLibraries };
}
