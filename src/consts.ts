// Site-wide facts that more than one page or island needs.

/** The launch instant (spec §9). Plain ISO text so it can be handed to islands as a prop. */
export const LAUNCH_AT = "2028-01-01T00:00:00Z";

/**
 * When the launch's calendar event (src/pages/launch.ics.ts) last changed, its DTSTAMP: a
 * calendar that imports the file again keeps the newer copy. Move it on whenever LAUNCH_AT or
 * the event's text changes.
 */
export const LAUNCH_EVENT_UPDATED_AT = "2026-11-22T00:00:00Z";

export const SITE_NAME = "The Future Awaits";
export const SITE_DESCRIPTION =
  "Revolutionary AI technology arrives in 2028. Join the early access list and get up to 20% off at launch.";
export const THEME_COLOR = "#05060f";
