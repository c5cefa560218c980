// How the browser tests and the bench start Chromium: Debian's build (nothing may download a
// browser on CI's machines), with the flags a closed network and a root user need.

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
