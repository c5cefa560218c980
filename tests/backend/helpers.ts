// Shared set-up for the backend tests: an in-memory backend on a free port, supabase-js clients
// for its keys, raw REST calls for what supabase-js cannot express, and tokens signed on the spot.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { createHmac, randomUUID } from "node:crypto";
import { startBackend, type Backend, type BackendOptions } from "../../server/backend/index.ts";
import { LOCAL_JWT_SECRET } from "../../server/backend/keys.ts";

export function startTestBackend(options: BackendOptions = {}): Promise<Backend> {
  return startBackend({ dataDir: null, port: 0, log: () => {}, ...options });
}

export function clientFor(backend: Backend, key: string): SupabaseClient {
  return createClient(backend.url, key, { auth: { persistSession: false, autoRefreshToken: false } });
}

/** An address no other test uses, so tests can share one database. */
export function uniqueEmail(label = "visitor"): string {
  return `${label}-${randomUUID()}@example.com`;
}

export const DUPLICATE_MESSAGE = 'duplicate key value violates unique constraint "early_access_email_key"';

/** An HS256 JWT with these claims, signed with the local secret unless told otherwise. */
export function signJwt(claims: Record<string, unknown>, secret = LOCAL_JWT_SECRET): string {
  const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString("base64url");
  const unsigned = `${encode({ alg: "HS256", typ: "JWT" })}.${encode(claims)}`;
  return `${unsigned}.${createHmac("sha256", secret).update(unsigned).digest("base64url")}`;
}

export interface RestCall {
  method?: string;
  /** The part after /rest/v1/, query string included. */
  path?: string;
  /** Sent as apikey and as the bearer token; null sends neither. */
  key?: string | null;
  headers?: Record<string, string>;
  body?: string;
}

/** A raw call to the REST endpoint, as anon on early_access unless told otherwise. */
export function rest(
  backend: Backend,
  { method = "GET", path = "early_access", key, headers = {}, body }: RestCall = {},
) {
  const apikey = key === undefined ? backend.anonKey : key;
  const auth: Record<string, string> = apikey === null ? {} : { apikey, authorization: `Bearer ${apikey}` };
  return fetch(`${backend.url}/rest/v1/${path}`, {
    method,
    headers: { "content-type": "application/json", ...auth, ...headers },
    body,
  });
}
