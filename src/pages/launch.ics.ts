// The launch as a calendar event, for the landing page's "Add to calendar" link: written into the
// build as the static file /launch.ics, from the launch constant.
import type { APIRoute } from "astro";
import { LAUNCH_AT, LAUNCH_EVENT_UPDATED_AT, SITE_NAME } from "../consts";
import { calendarFile } from "../lib/calendar";

export const GET: APIRoute = ({ site }) => {
  const home = new URL("/", site).href;
  const event = {
    // One event per site, whatever its date: a later import updates it rather than adding another.
    uid: `launch@${new URL(home).hostname}`,
    stamp: LAUNCH_EVENT_UPDATED_AT,
    start: LAUNCH_AT,
    summary: `${SITE_NAME}: launch`,
    description: `Revolutionary AI technology arrives today. Early access members get up to 20% off.\n${home}`,
    url: home,
  };
  return new Response(calendarFile(event, `-//${SITE_NAME}//Launch//EN`), {
    headers: { "Content-Type": "text/calendar; charset=utf-8" },
  });
};
