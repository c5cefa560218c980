// When an island's JavaScript may start to load without competing with the page's first paint:
// when the browser is idle after that paint. Astro's client:idle can fire before it, while the
// browser idles waiting to paint (as it does after the process switch a
// Cross-Origin-Opener-Policy causes), and the scripts then delay the first paint in
// Lighthouse's simulation.

/** Calls `start` once, when the browser is first idle after the page's first contentful paint. */
export function idleAfterFirstPaint(start: () => void): void {
  const whenIdle = () => {
    if ("requestIdleCallback" in window) requestIdleCallback(() => start());
    else setTimeout(start, 200);
  };
  // Without paint timing, idle alone, as client:idle.
  if (!globalThis.PerformanceObserver?.supportedEntryTypes?.includes("paint")) {
    whenIdle();
    return;
  }
  const observer = new PerformanceObserver((entries) => {
    if (entries.getEntriesByName("first-contentful-paint").length === 0) return;
    observer.disconnect();
    whenIdle();
  });
  observer.observe({ type: "paint", buffered: true });
}
