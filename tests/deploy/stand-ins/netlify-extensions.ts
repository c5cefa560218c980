// Loaded into netlify-cli's processes by the Netlify stand-in's users (NODE_OPTIONS=--import):
// the one call of a deploy to a host other than Netlify's API, its extension API
// (https://api.netlifysdk.com), sent to the stand-in at NETLIFY_EXTENSIONS_URL instead.
// netlify-cli@27.10.2 has no switch for it: @netlify/config 25.2.6, lib/main.js line 39, takes
// the production address unless the API's host is Netlify's staging one, and
// lib/api/site_info.js (getExtensions) calls it with Node's own fetch. Without an answer the CLI
// falls back to reading the project offline and then looks the site up by name
// (dist/commands/base-command.js, lines 561 and 675): not the path a deploy takes for real.
const EXTENSIONS = "https://api.netlifysdk.com/";
const standIn = process.env.NETLIFY_EXTENSIONS_URL;
const fetchOnline = globalThis.fetch;
if (standIn)
  globalThis.fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    return url.startsWith(EXTENSIONS)
      ? fetchOnline(`${standIn}/${url.slice(EXTENSIONS.length)}`, init)
      : fetchOnline(input, init);
  };
