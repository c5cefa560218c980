// `status`: whether the project answers, how many signed up, and when last, with a word on
// Supabase's pausing of a quiet Free-plan project.
import { formatCount } from "../chart.ts";
import { formatLocal } from "../dates.ts";
import type { VerbContext } from "./context.ts";

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** How long without a sign-up before `status` warns of Supabase's pausing (after 7 days). */
const QUIET_WARNING_MS = 3 * DAY_MS;

/** `status`: whether the project answers, how many signed up, and when last. */
export async function status(
  context: VerbContext,
  { url, local }: { url: string; local: boolean },
): Promise<void> {
  const started = performance.now();
  const { sign_ups, last_at } = await context.signUps.totals();
  const took = Math.round(performance.now() - started);
  const lines = [`The project at ${url} answers (in ${took} ms), with this repository's tables and views.`];
  if (last_at === null) lines.push("No sign-ups yet.");
  else {
    const quiet = context.now.getTime() - new Date(last_at).getTime();
    lines.push(
      `${formatCount(sign_ups)} ${sign_ups === 1 ? "sign-up" : "sign-ups"}, the latest ` +
        `${formatLocal(new Date(last_at))} (${context.zone}), ${formatAgo(quiet)}.`,
    );
    if (!local && quiet >= QUIET_WARNING_MS)
      lines.push(
        "A quiet page is not a dead one, but Supabase pauses a Free-plan project after 7 days of low " +
          'activity, and every sign-up then fails: see README.md, "A quiet project".',
      );
  }
  context.stdout.write(`${lines.join("\n")}\n`);
}

/** `3 days ago`, `5 hours ago`, `just now`. */
function formatAgo(ms: number): string {
  const [unit, size] =
    ms >= DAY_MS
      ? ["day", DAY_MS]
      : ms >= HOUR_MS
        ? ["hour", HOUR_MS]
        : ms >= MINUTE_MS
          ? ["minute", MINUTE_MS]
          : [];
  if (!unit) return "just now";
  const count = Math.floor(ms / size!);
  return `${count} ${unit}${count === 1 ? "" : "s"} ago`;
}
