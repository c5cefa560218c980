import { describe, expect, it } from "vitest";
import { msUntilNextTick, timeLeft } from "../../src/lib/countdown";

const LAUNCH = Date.parse("2028-01-01T00:00:00Z");
const at = (iso: string) => Date.parse(iso);

describe("timeLeft", () => {
  it.each([
    // Far away: 404 days and the rest, every unit in play.
    ["far away", at("2026-11-22T01:42:05Z"), { days: 404, hours: 22, minutes: 17, seconds: 55, done: false }],
    // Exactly one day before.
    ["one day", at("2027-12-31T00:00:00Z"), { days: 1, hours: 0, minutes: 0, seconds: 0, done: false }],
    // The last full second.
    ["last second", at("2027-12-31T23:59:59Z"), { days: 0, hours: 0, minutes: 0, seconds: 1, done: false }],
    // Part of a second left still shows 1 s, so 0 s only ever means "launched".
    ["sub-second", LAUNCH - 1, { days: 0, hours: 0, minutes: 0, seconds: 1, done: false }],
    // Rounding up: 1.5 s left shows 2 s.
    ["half second", LAUNCH - 1500, { days: 0, hours: 0, minutes: 0, seconds: 2, done: false }],
    // Exactly at launch.
    ["at launch", LAUNCH, { days: 0, hours: 0, minutes: 0, seconds: 0, done: true }],
    // After launch: zeros, never negative numbers.
    ["after", at("2029-06-01T12:00:00Z"), { days: 0, hours: 0, minutes: 0, seconds: 0, done: true }],
  ])("%s", (_name, now, expected) => {
    expect(timeLeft(now, LAUNCH)).toEqual(expected);
  });
});

describe("msUntilNextTick", () => {
  it.each([
    // On a whole second the next change is a full second away.
    ["on the second", LAUNCH - 5000, 1000],
    // 300 ms into a second (4.7 s left) the display changes in 700 ms.
    ["mid-second", LAUNCH - 4700, 700],
    // 1 ms before a change.
    ["just before", LAUNCH - 4001, 1],
  ])("%s", (_name, now, expected) => {
    expect(msUntilNextTick(now, LAUNCH)).toBe(expected);
  });
});
