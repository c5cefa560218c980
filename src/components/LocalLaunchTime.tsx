import { useEffect, useState } from "react";
import { localDateTime } from "../lib/local-time";

export interface LocalLaunchTimeProps {
  /** ISO 8601 instant. */
  launchAt: string;
  /** Put before the time, such as "Your time:". */
  label: string;
}

/**
 * The launch in the visitor's own time zone. The build cannot know that zone, so the built
 * markup and the first render are empty, with the line's height kept free, and the time is
 * filled in by an effect once the island has hydrated.
 */
export default function LocalLaunchTime({ launchAt, label }: LocalLaunchTimeProps) {
  const [local, setLocal] = useState<string | null>(null);
  useEffect(() => setLocal(localDateTime(launchAt)), [launchAt]);

  return (
    // Two lines kept free on a phone, where a long zone name may wrap; one from sm up.
    <p
      className="mt-1 min-h-10 text-sm text-slate-400 sm:min-h-5"
      data-local-time={local ? "live" : "pending"}
    >
      {local && (
        <>
          {label} <time dateTime={launchAt}>{local}</time>
        </>
      )}
    </p>
  );
}
