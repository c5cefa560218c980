// Who is calling: first the check Supabase's API gateway makes (an apikey must be present and
// valid, an opaque key is swapped for its role's JWT), then PostgREST's own JWT authentication,
// which gives the database role and claims the request runs with.
import { ANON_ROLE, postgrestError } from "../postgrest/errors.ts";
import { jsonResponse, ResponseError } from "../http-response.ts";
import { verifyJwt, type Claims } from "./jwt.ts";

export interface Identity {
  role: string;
  claims: Claims;
}

// The hosted gateway's answers, word for word.
const MISSING_KEY = {
  message: "No API key found in request",
  hint: "No `apikey` request header or url param was found.",
};
const INVALID_KEY = {
  message: "Invalid API key",
  hint: "Double check your Supabase `anon` or `service_role` API key.",
};
// Hosted Supabase refuses a secret key that comes from a browser. Its exact answer is not
// documented; this one says what happened.
const SECRET_KEY_IN_BROWSER = {
  message: "Forbidden use of secret API key in browser",
  hint: "Secret API keys belong on servers; a browser uses the publishable key.",
};

/** The role of the secret key and of the legacy service_role JWT: every row, past every policy. */
const SERVICE_ROLE = "service_role";

/**
 * Whether a request carries any sign that a browser sent it: an Origin (every cross-origin fetch
 * and every POST has one), a Fetch Metadata header only browsers send (Sec-Fetch-Site,
 * -Dest, -User; Node's own fetch sends Sec-Fetch-Mode too, so that one alone tells nothing),
 * or a browser's User-Agent, whatever its case. Otherwise a page a developer happens to visit
 * could use a server key it guessed (the local ones are public) against the local list.
 */
export function fromBrowser(headers: Readonly<Record<string, string>>): boolean {
  return (
    headers.origin !== undefined ||
    BROWSER_FETCH_METADATA.some((name) => headers[name] !== undefined) ||
    /^mozilla\//i.test(headers["user-agent"]?.trim() ?? "")
  );
}

const BROWSER_FETCH_METADATA = ["sec-fetch-site", "sec-fetch-dest", "sec-fetch-user"];

export interface Credentials {
  /** The `apikey` header, or else the `?apikey=` parameter. */
  apikey: string | null;
  authorization: string | undefined;
  /** Whether the request came from a browser (fromBrowser). */
  browser: boolean;
}

/** The CLI's gateway tells an opaque key from a JWT in `Authorization` by this, case and all. */
const OPAQUE_BEARER_PREFIX = "Bearer sb_";

/**
 * Like the hosted gateway's, the apikey must be present and valid: one of the local opaque keys
 * or a legacy JWT signed with the secret; and nothing that acts as service_role (the secret key,
 * the legacy service_role JWT, a token claiming that role) from a browser.
 * Which token then decides the role follows the CLI's gateway (kong.yml): a bearer token that
 * is not an opaque key (a signed-in user's JWT) wins; otherwise the apikey's JWT is used, and
 * an opaque key in `Authorization`, which supabase-js sends as a copy of the apikey, is dropped.
 */
export function authenticate(
  { apikey, authorization, browser }: Credentials,
  secret: string,
  opaqueKeys: ReadonlyMap<string, string>,
): Identity {
  if (!apikey) throw new ResponseError(jsonResponse(401, MISSING_KEY));
  const apikeyJwt = opaqueKeys.get(apikey) ?? apikey;
  const apikeyCheck = verifyJwt(apikeyJwt, secret);
  if (!("claims" in apikeyCheck)) throw new ResponseError(jsonResponse(401, INVALID_KEY));
  const refuseInBrowser = () => {
    if (browser) throw new ResponseError(jsonResponse(401, SECRET_KEY_IN_BROWSER));
  };
  if (roleOf(apikeyCheck.claims) === SERVICE_ROLE) refuseInBrowser();

  const userToken = authorization?.startsWith(OPAQUE_BEARER_PREFIX) ? null : bearerToken(authorization);
  const check = verifyJwt(userToken ?? apikeyJwt, secret);
  if (!("claims" in check)) {
    throw postgrestError(401, check.code, check.message, {
      headers: {
        "WWW-Authenticate": `Bearer error="invalid_token", error_description=${JSON.stringify(check.message)}`,
      },
    });
  }
  const role = roleOf(check.claims);
  if (role === SERVICE_ROLE) refuseInBrowser();
  // PostgREST hands the database the claims with the role it settled on.
  return { role, claims: { ...check.claims, role } };
}

function bearerToken(authorization: string | undefined): string | null {
  const match = /^bearer(?: (.*))?$/i.exec(authorization?.trim() ?? "");
  return match ? (match[1]?.trim() ?? "") : null;
}

/** The `role` claim, anon without one; a non-string role is used as its JSON text. */
function roleOf(claims: Claims): string {
  const { role } = claims;
  if (role === undefined) return ANON_ROLE;
  return typeof role === "string" ? role : JSON.stringify(role);
}
