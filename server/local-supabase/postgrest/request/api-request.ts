// The request stage (PostgREST's ApiRequest.hs, userApiRequest): what an HTTP request asks for,
// read before the schema cache is consulted: the relation its path names, the schema it names,
// its query string and its preferences. A request PostgREST would refuse here is refused here.
import type { Identity } from "../../gateway/authentication.ts";
import { postgrestError } from "../errors.ts";
import { EXPOSED_SCHEMA } from "../schema-cache.ts";
import { parsePreferences, type Preferences } from "./preferences.ts";
import { notImplemented, parseQueryParams, type QueryParams } from "./query-params.ts";

/** A request as the gateway hands it to PostgREST. */
export interface RestRequest {
  method: string;
  /** The path after /rest/v1, as PostgREST sees it: `/early_access`. */
  path: string;
  query: URLSearchParams;
  /** Lower-cased names. */
  headers: Record<string, string>;
  /** As received: whether it is text, and in which encoding, is for the payload to decide. */
  body: Uint8Array;
  identity: Identity;
}

export interface ApiRequest extends RestRequest {
  /** The table or view the path names. */
  relation: string;
  params: QueryParams;
  preferences: Preferences;
  /** The schema confirmed in the answer, when the request named one. */
  profileHeader: Record<string, string>;
}

export function userApiRequest(request: RestRequest): ApiRequest {
  return {
    ...request,
    profileHeader: negotiateSchema(request.method, request.headers),
    relation: relationName(request.path),
    params: parseQueryParams(request.query),
    preferences: parsePreferences(request.headers.prefer),
  };
}

/**
 * Only `public` is exposed. A request that names its schema (Accept-Profile to read,
 * Content-Profile to write) gets it confirmed in the answer.
 */
function negotiateSchema(method: string, headers: Record<string, string>): Record<string, string> {
  const schema =
    method === "GET" || method === "HEAD" ? headers["accept-profile"] : headers["content-profile"];
  if (schema === undefined) return {};
  if (schema !== EXPOSED_SCHEMA) {
    throw postgrestError(406, "PGRST106", `Invalid schema: ${schema}`, {
      hint: `Only the following schemas are exposed: ${EXPOSED_SCHEMA}`,
    });
  }
  return { "Content-Profile": EXPOSED_SCHEMA };
}

function relationName(path: string): string {
  const segments = path.split("/").slice(1);
  if (segments[0] === "" || segments[0] === "rpc") throw notImplemented("The schema root and /rpc are");
  if (segments.length !== 1) throw postgrestError(404, "PGRST125", "Invalid path specified in request URL");
  try {
    return decodeURIComponent(segments[0]!);
  } catch {
    throw postgrestError(404, "PGRST125", "Invalid path specified in request URL");
  }
}
