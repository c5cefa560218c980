// What a limit becomes as a bucket (a table of cases), then the sign-up limits' buckets over time,
// through the real trigger at instants the test chooses: what the buckets decide is a pure
// function of the stored state and the instant. Real sign-ups (each a transaction of its own, as
// anon with the edge's headers, as PostgREST runs them) in a database of their own whose rules'
// clock, private.sign_up_clock(), reads the instant each transaction sets; the one thing faked is
// the clock. Small limits (small-limits.ts), so each bucket fills within a few dozen sign-ups. The
// rest of the limits' promises, with real requests: sign-up-limits.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openClockedDatabase, signUpOverSqlAt, uniqueEmail, type TestDatabase } from "../support/database.ts";
import { FOLLOW, limitIn, limitsOf, SMALL_NETWORK_LIMITS, type Limits } from "./small-limits.ts";

// There, a network counts in one shard, so that its counts are exact (the shards are tested with
// real requests in sign-up-limits.test.ts), and each test signs up from a network of its own.
let clocked: TestDatabase;
/** The clocked database's limits: the small ones, a network's small too (SMALL_NETWORK_LIMITS). */
let clockedLimits: Limits;
const clockedLimit = (kind: "pace" | "ceiling", name: string) => limitIn(clockedLimits, kind, name);
beforeAll(async () => {
  clocked = await openClockedDatabase(`${SMALL_NETWORK_LIMITS}
    update private.sign_up_scopes set shards = 1 where name = 'network';
    ${FOLLOW}`);
  clockedLimits = await limitsOf(clocked.owner);
});
afterAll(() => clocked?.database.close());

/**
 * Sign-ups from `client`, one at each of `instants` (seconds since 1970), in order. Each answer:
 * `refused: <details> (Retry-After n)`, `marked: <reasons>` or `stored`.
 */
async function signUpsAt(instants: number[], client: string): Promise<string[]> {
  const answers: string[] = [];
  for (const instant of instants) {
    const email = uniqueEmail("clocked");
    const { answer, details } = await signUpOverSqlAt(clocked, instant, client, email);
    if (answer !== "stored") {
      const retryAfter = /^429 \(Retry-After (\d+)\)$/.exec(answer)?.[1];
      expect(retryAfter, `${answer}: ${details}`).toBeDefined();
      answers.push(
        `refused: ${details!.replace(/^At most/, "at most").replace(/\.$/, "")} (Retry-After ${retryAfter})`,
      );
      continue;
    }
    const { rows } = await clocked.owner.query<{ reason: string }>(
      `select m.reason from public.early_access_marks m join public.early_access e on e.id = m.sign_up_id
        where e.email = $1`,
      [email],
    );
    answers.push(rows[0] ? `marked: ${rows[0].reason}` : "stored");
  }
  return answers;
}

/** How many times each answer came, in the order each first came. */
function tally(answers: string[]): Array<[string, number]> {
  const counts = new Map<string, number>();
  for (const answer of answers) counts.set(answer, (counts.get(answer) ?? 0) + 1);
  return [...counts];
}

const at = (count: number, instant: number) => Array<number>(count).fill(instant);
/** Seconds since 1970 of a launch morning. */
const LAUNCH = Date.parse("2028-01-01T09:00:00Z") / 1000;

describe("a limit as a bucket (private.bucket_of, the one place it is made)", () => {
  it.each([
    // window, max_sign_ups, shards: its window and what one sign-up adds, in milliseconds
    ["1 minute", 10, 1, 60_000, 6_000],
    ["1 hour", 1_000, 1, 3_600_000, 3_600],
    // A shard holds its share: one sign-up there costs the shards' count of a share.
    ["1 hour", 2_000, 16, 3_600_000, 28_800],
    // Rounded to the millisecond, half up: 3,600,000 × 3 / 7 and 1,000 / 2,000.
    ["1 hour", 7, 3, 3_600_000, 1_542_857],
    ["1 second", 2_000, 1, 1_000, 1],
    ["1 day", 3_000, 1, 86_400_000, 28_800],
  ])(
    "%s, %i sign-ups, %i shard(s): a window of %i ms, %i ms a sign-up",
    async (window, max, shards, windowMs, costMs) => {
      const { rows } = await clocked.owner.query<{ window_ms: string; cost_ms: string }>(
        `select b.window_ms, b.cost_ms
         from private.bucket_of(row('a limit', $1::interval, $2, 'address', 'pace')::private.sign_up_limits, $3) b`,
        [window, max, shards],
      );
      expect(rows.map(({ window_ms, cost_ms }) => [Number(window_ms), Number(cost_ms)])).toEqual([
        [windowMs, costMs],
      ]);
    },
  );
});

describe("the buckets over time (a clock the test sets)", () => {
  it("a flood at one instant: the hour's ceiling stored, then refused until its bucket has room for one more", async () => {
    const { max: pace } = clockedLimit("pace", "per address per minute");
    const { max: ceiling, seconds: hour } = clockedLimit("ceiling", "per address per hour");
    const { max: dailyPace } = clockedLimit("pace", "per address per day");
    const { max: networkPace } = clockedLimit("pace", "per network per hour");
    // One more every hour / ceiling seconds (300 s for 12 an hour; 3.6 s for the schema's 1,000).
    const drip = hour / ceiling;
    const answers = await signUpsAt(
      [...at(ceiling + 1, LAUNCH), LAUNCH + drip - 0.1, LAUNCH + drip + 0.01, LAUNCH + drip + 0.02],
      "10.0.10.1",
    );

    expect(answers.slice(0, pace)).toEqual(at(pace, 0).map(() => "stored"));
    expect(answers[pace]).toBe(`marked: about ${pace + 1} sign-ups per address per minute (pace: ${pace})`);
    expect(answers[ceiling - 1]).toBe(
      `marked: about ${ceiling} sign-ups per address per minute (pace: ${pace}); ` +
        `about ${ceiling} sign-ups per address per day (pace: ${dailyPace}); ` +
        `about ${ceiling} sign-ups per network per hour (pace: ${networkPace})`,
    );
    const refused = `refused: at most ${ceiling} sign-ups per address per hour`;
    expect(answers.slice(ceiling)).toEqual([
      `${refused} (Retry-After ${Math.ceil(drip)})`,
      `${refused} (Retry-After 1)`,
      expect.stringMatching(/^marked: /),
      `${refused} (Retry-After ${Math.ceil(drip)})`,
    ]);
  });

  it("a bucket filled into its rounding's slack: refused with a Retry-After of at most the drip", async () => {
    const { max: ceiling, seconds: hour } = clockedLimit("ceiling", "per address per hour");
    const drip = hour / ceiling;
    // The hour's ceiling at once, then, a few milliseconds before one drains, one more: within the
    // half millisecond per sign-up the bucket allows for rounding, so stored. The next, at that
    // instant, is refused until one drains: less than a drip away.
    const slack = Math.floor(ceiling / 2) / 1000;
    const justBefore = LAUNCH + drip - slack / 2;
    const answers = await signUpsAt([...at(ceiling, LAUNCH), justBefore, justBefore], "10.0.15.1");
    expect(answers[ceiling]).toMatch(/^marked: /);
    expect(answers[ceiling + 1]).toBe(
      `refused: at most ${ceiling} sign-ups per address per hour (Retry-After ${Math.ceil(drip)})`,
    );
  });

  it("a sign-up per pace's interval is unmarked until the day's pace; one a second, past the minute's pace once its bucket holds more", async () => {
    const { max: pace, seconds: minute } = clockedLimit("pace", "per address per minute");
    const { max: dailyPace, seconds: day } = clockedLimit("pace", "per address per day");
    const interval = minute / pace;
    const steady = await signUpsAt(
      Array.from({ length: dailyPace + 1 }, (_, index) => LAUNCH + interval * index),
      "10.0.11.1",
    );
    expect(steady.slice(0, dailyPace)).toEqual(at(dailyPace, 0).map(() => "stored"));
    // The day's bucket, with the last: every sign-up, less what drained meanwhile.
    const heldThatDay = Math.round(dailyPace + 1 - (dailyPace * interval * dailyPace) / day);
    expect(steady[dailyPace]).toBe(
      `marked: about ${heldThatDay} sign-ups per address per day (pace: ${dailyPace})`,
    );

    // One a second, up to the day's pace: the minute's bucket drains one every interval
    // seconds, so with the (k + 1)th sign-up, at second k, it holds k + 1 − k / interval; the
    // first to make it more than the pace is marked, and every one after stays past it (marked
    // sign-ups count too).
    const held = (k: number) => k + 1 - k / interval;
    const firstPast = Array.from({ length: dailyPace }, (_, k) => k).find((k) => held(k) > pace)!;
    const faster = await signUpsAt(
      Array.from({ length: dailyPace }, (_, index) => LAUNCH + index),
      "10.0.12.1",
    );
    expect(faster.slice(0, firstPast)).toEqual(at(firstPast, 0).map(() => "stored"));
    for (let k = firstPast; k < dailyPace; k++) {
      expect(faster[k], `the sign-up at second ${k}`).toBe(
        `marked: about ${Math.round(held(k))} sign-ups per address per minute (pace: ${pace})`,
      );
    }
  });

  it("holds at most N + N·t/W in any span t: a sign-up every few seconds for an hour stores at most twice the hour's ceiling", async () => {
    const { max: ceiling, seconds: hour } = clockedLimit("ceiling", "per address per hour");
    // Ten tries per drip of the hour's bucket, for an hour.
    const step = hour / ceiling / 10;
    const answers = await signUpsAt(
      Array.from({ length: hour / step }, (_, index) => LAUNCH + step * index),
      "10.0.13.1",
    );
    const stored = answers.filter((answer) => !answer.startsWith("refused")).length;

    // The hour's bucket fills after ceiling / (1 − step·ceiling / hour) tries, then takes one
    // every hour / ceiling s: all but the last drip's within the hour.
    expect(stored).toBeGreaterThanOrEqual(2 * ceiling - 1);
    expect(stored).toBeLessThanOrEqual(2 * ceiling);
  });

  it("the day's ceiling: the hour's ceiling at the top of each hour, until the day's is reached", async () => {
    const { max: hourly } = clockedLimit("ceiling", "per address per hour");
    const { max: daily, seconds: day } = clockedLimit("ceiling", "per address per day");
    const hours = Math.ceil(daily / hourly);
    const answers = await signUpsAt(
      Array.from({ length: hours + 1 }, (_, hour) => at(hourly, LAUNCH + 3_600 * hour)).flat(),
      "10.0.14.1",
    );
    const last = answers.slice(hours * hourly);

    expect(answers.slice(0, hours * hourly).filter((answer) => answer.startsWith("refused"))).toEqual([]);
    // The day's bucket drains one every day / daily s: what drained in those hours fits, then no more.
    const drained = Math.floor((hours * 3_600) / (day / daily));
    expect(tally(last.map((answer) => answer.replace(/^marked: .*/, "marked")))).toEqual([
      ["marked", drained],
      [
        `refused: at most ${daily} sign-ups per address per day (Retry-After ${Math.ceil(day / daily)})`,
        hourly - drained,
      ],
    ]);
  });
});
