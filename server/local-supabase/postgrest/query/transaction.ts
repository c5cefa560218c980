// Runs one REST request the way PostgREST does (Query/PreQuery.hs): a transaction of its own,
// the request's settings and role set transaction-locally, then the work, then commit; any
// error rolls everything back.
import type { Database, Queryable } from "../../database/database.ts";
import type { Claims } from "../../gateway/jwt.ts";
import type { SchemaCache } from "../schema-cache.ts";

export interface RequestContext {
  role: string;
  claims: Claims;
  method: string;
  /** The path PostgREST sees, after the gateway strips /rest/v1: `/early_access`. */
  path: string;
  /** Lower-cased names, without the cookie header. */
  headers: Record<string, string>;
  cookies: Record<string, string>;
}

export type RequestRunner = <T>(context: RequestContext, work: (db: Queryable) => Promise<T>) => Promise<T>;

/** PostgREST's search path on Supabase: the exposed schema, then db-extra-search-path. */
const SEARCH_PATH = '"public", "extensions"';

export function createRequestRunner(
  db: Database,
  { roleSettings }: Pick<SchemaCache, "roleSettings">,
): RequestRunner {
  return (context, work) =>
    db.transaction(
      async (tx) => {
        await applySettings(tx, context, roleSettings.get(context.role) ?? []);
        return work(tx);
      },
      // GET and HEAD cannot write, as in PostgREST.
      { readOnly: context.method === "GET" || context.method === "HEAD" },
    );
}

/** One statement of set_config(name, value, true) calls, names and values as parameters. */
async function applySettings(db: Queryable, context: RequestContext, roleSettings: Array<[string, string]>) {
  const settings: Array<[string, string]> = [
    ["search_path", SEARCH_PATH],
    // The role's own settings (anon's 3 s statement_timeout) come before the role itself.
    ...roleSettings,
    // Postgres refuses a role its login role, authenticator, is no member of (42501), as it
    // does for PostgREST; `none` resets to the login role itself.
    ["role", context.role],
    ["request.jwt.claims", JSON.stringify(context.claims)],
    ["request.method", context.method],
    ["request.path", context.path],
    ["request.headers", JSON.stringify(context.headers)],
    ["request.cookies", JSON.stringify(context.cookies)],
  ];
  const calls = settings.map((_, index) => `set_config($${2 * index + 1}, $${2 * index + 2}, true)`);
  await db.query(`select ${calls.join(", ")}`, settings.flat());
}
