// Runs one REST request the way PostgREST does (Query/PreQuery.hs): a transaction of its own,
// the request's settings and role set transaction-locally, then the work, then commit; any
// error rolls everything back.
import type { Database, Queryable } from "./database/database.ts";
import { fromPostgresError } from "./errors.ts";
import type { Claims } from "./jwt.ts";
import { LOGIN_ROLE, type SchemaCache } from "./schema-cache.ts";

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

/**
 * To Postgres, `set_config('role', 'none')` is RESET ROLE: back to the session's user. For
 * PostgREST that is its login role, which may touch no table; in PGlite it is a superuser. So a
 * token claiming this role (anyone can mint one with the public local secret) runs as the login
 * role here too, as it would on Supabase.
 */
const RESET_ROLE = "none";

/** PostgREST's search path on Supabase: the exposed schema, then db-extra-search-path. */
const SEARCH_PATH = '"public", "extensions"';

export function createRequestRunner(
  db: Database,
  { roleSettings, assumableRoles }: Pick<SchemaCache, "roleSettings" | "assumableRoles">,
): RequestRunner {
  return (context, work) =>
    db.transaction(
      async (tx) => {
        if (!assumableRoles.has(context.role)) await refuseRole(tx, context.role);
        await applySettings(tx, context, roleSettings.get(context.role) ?? []);
        return work(tx);
      },
      // GET and HEAD cannot write, as in PostgREST.
      { readOnly: context.method === "GET" || context.method === "HEAD" },
    );
}

/**
 * What Postgres answers PostgREST's SET ROLE to a role its login role is no member of: a role that
 * exists is refused (42501, which PostgREST answers with 403); an unknown one is left to
 * set_config, which fails with 22023 "role … does not exist" as it does for PostgREST.
 */
async function refuseRole(db: Queryable, role: string): Promise<void> {
  const { rows } = await db.query<{ known: boolean }>(
    "select exists (select from pg_catalog.pg_roles where rolname = $1) as known",
    [role],
  );
  if (rows[0]!.known) {
    throw fromPostgresError({ code: "42501", message: `permission denied to set role "${role}"` }, role);
  }
}

/** One statement of set_config(name, value, true) calls, names and values as parameters. */
async function applySettings(db: Queryable, context: RequestContext, roleSettings: Array<[string, string]>) {
  const settings: Array<[string, string]> = [
    ["search_path", SEARCH_PATH],
    // The role's own settings (anon's 3 s statement_timeout) come before the role itself.
    ...roleSettings,
    ["role", context.role === RESET_ROLE ? LOGIN_ROLE : context.role],
    ["request.jwt.claims", JSON.stringify(context.claims)],
    ["request.method", context.method],
    ["request.path", context.path],
    ["request.headers", JSON.stringify(context.headers)],
    ["request.cookies", JSON.stringify(context.cookies)],
  ];
  const calls = settings.map((_, index) => `set_config($${2 * index + 1}, $${2 * index + 2}, true)`);
  await db.query(`select ${calls.join(", ")}`, settings.flat());
}
