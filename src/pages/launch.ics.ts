// The launch as a calendar event, for the landing page's "Add to calendar" link: written into the
// build as the static file /launch.ics, from the content file.
import type { APIRoute } from "astro";
import { getSiteContent } from "../lib/content";
import { calendarFile } from "../lib/calendar";

/** When this build was made: the event's DTSTAMP, so a calendar importing it again keeps the newer copy. */
const BUILT_AT = new Date().toISOString();

export const GET: APIRoute = async ({ site }) => {
  const { launch, site: about, calendar } = await getSiteContent();
  const home = new URL("/", site).href;
  const event = {
    // One event per site, whatever its date: a later import updates it rather than adding another.
    uid: `launch@${new URL(home).hostname}`,
    stamp: BUILT_AT,
    start: launch.at,
    summary: calendar.title,
    description: `${calendar.description}\n${home}`,
    url: home,
  };
  return new Response(calendarFile(event, `-//${about.name}//Launch//EN`), {
    headers: { "Content-Type": "text/calendar; charset=utf-8" },
  });
};
