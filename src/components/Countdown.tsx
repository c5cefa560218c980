import { useEffect, useState } from "react";
import { msUntilNextTick, timeLeft, type TimeLeft } from "../lib/countdown";

export interface CountdownLabels {
  days: string;
  hours: string;
  minutes: string;
  seconds: string;
}

export interface CountdownProps {
  /** ISO 8601 instant to count down to. */
  launchAt: string;
  labels: CountdownLabels;
}

const UNITS = ["days", "hours", "minutes", "seconds"] as const;

// Figure dashes (U+2012) are as wide as digits, so nothing moves when the numbers arrive.
const PLACEHOLDER = {
  days: "\u2012\u2012\u2012",
  hours: "\u2012\u2012",
  minutes: "\u2012\u2012",
  seconds: "\u2012\u2012",
};

/**
 * Days, hours, minutes and seconds until `launchAt`. The build renders placeholders rather
 * than numbers (a static build is served long after it was made); the first tick runs as soon
 * as the island hydrates, and ticking stops at the launch instant, showing zeros.
 */
export default function Countdown({ launchAt, labels }: CountdownProps) {
  const [left, setLeft] = useState<TimeLeft | null>(null);

  useEffect(() => {
    const target = Date.parse(launchAt);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = () => {
      clearTimeout(timer);
      const now = Date.now();
      const next = timeLeft(now, target);
      setLeft(next);
      if (!next.done) timer = setTimeout(tick, msUntilNextTick(now, target));
    };
    // Browsers slow timers in background tabs: catch up the moment the page is seen again.
    const onVisible = () => document.visibilityState === "visible" && tick();
    tick();
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisible);
    };
  }, [launchAt]);

  return (
    // No live region: a screen reader would otherwise be told every second.
    <ul className="grid grid-cols-4 gap-2 sm:gap-4" data-countdown={left ? "live" : "pending"}>
      {UNITS.map((unit) => (
        <li
          key={unit}
          className="glass py-rhythm-1/2 flex flex-col items-center rounded-2xl px-1 sm:px-4"
          data-unit={unit}
        >
          <span className="font-display text-digits font-semibold text-white tabular-nums">
            {/* Days may need three digits: the box is sized for them from the start. */}
            <span
              className={
                unit === "days"
                  ? "inline-block min-w-[3ch] text-center"
                  : "inline-block min-w-[2ch] text-center"
              }
            >
              {left ? String(left[unit]).padStart(2, "0") : PLACEHOLDER[unit]}
            </span>
          </span>
          <span className="mt-1 text-[0.6875rem] font-medium tracking-[0.1em] text-slate-300 uppercase sm:text-sm sm:tracking-[0.2em]">
            {labels[unit]}
          </span>
        </li>
      ))}
    </ul>
  );
}
