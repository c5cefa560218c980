// Countdown arithmetic: every value is derived from the clock, never from counting ticks,
// so the display is right after a background tab or a sleeping laptop wakes up.

export interface TimeLeft {
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
  /** True once the target has been reached; every field is then 0. */
  done: boolean;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export function timeLeft(nowMs: number, targetMs: number): TimeLeft {
  // Whole seconds remaining, rounded up, so "0 s" is shown only once the target is reached.
  const remaining = Math.max(0, Math.ceil((targetMs - nowMs) / SECOND) * SECOND);
  return {
    days: Math.floor(remaining / DAY),
    hours: Math.floor((remaining % DAY) / HOUR),
    minutes: Math.floor((remaining % HOUR) / MINUTE),
    seconds: Math.floor((remaining % MINUTE) / SECOND),
    done: remaining === 0,
  };
}

/** Milliseconds until the displayed seconds next change, so ticks land on the second. */
export function msUntilNextTick(nowMs: number, targetMs: number): number {
  const offset = (targetMs - nowMs) % SECOND;
  return offset > 0 ? offset : SECOND;
}
