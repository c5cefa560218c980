// The Supabase client the sign-up sends with: supabase-js's own database client,
// @supabase/postgrest-js, set up exactly as supabase-js's `createClient(url, key)` sets it up in a
// browser, so that the sign-up is the same request, byte for byte, with the same answers
// (tests/site/supabase-client.test.ts compares the two on the wire). The rest of supabase-js
// (auth, realtime, storage, functions: 47 KB brotli, against 5 KB for this) is never used by the
// page, and only delayed the first sign-up on a slow phone. Its auth part would put a signed-in
// visitor's token in `Authorization`; no screen ever signs anyone in, so supabase-js, too, always
// sends the key there.
import { PostgrestClient } from "@supabase/postgrest-js";
import { version } from "@supabase/supabase-js/package.json";

/** What supabase-js, in a browser, names itself as in every request. */
const CLIENT_INFO = `supabase-js/${version}; platform=browser`;

export function createClient(projectUrl: string, key: string): PostgrestClient {
  // supabase-js's base: the project's URL with a trailing slash, then `rest/v1`.
  const base = projectUrl.endsWith("/") ? projectUrl : `${projectUrl}/`;
  return new PostgrestClient(new URL("rest/v1", base).href, {
    headers: { "X-Client-Info": CLIENT_INFO },
    schema: "public",
    // Looked up at each call, as supabase-js does.
    fetch: (...args) => fetch(...args),
    // supabase-js's fetchWithAuth: the key as `apikey`, and as the bearer token when there is no
    // session.
    wrapFetch: (send) => (input, init) => {
      const headers = new Headers(init?.headers);
      if (!headers.has("apikey")) headers.set("apikey", key);
      if (!headers.has("Authorization")) headers.set("Authorization", `Bearer ${key}`);
      return send(input, { ...init, headers });
    },
  });
}
