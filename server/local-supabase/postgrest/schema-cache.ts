// What PostgREST reads from the catalog once at start: the exposed tables and views with their
// columns, and each role's own settings (ALTER ROLE ... SET), applied to every request of that
// role.
import type { Queryable } from "../database/database.ts";

export const EXPOSED_SCHEMA = "public";

export interface Column {
  name: string;
  /** The type without modifiers (`character varying`), as PostgREST casts JSON values to it. */
  type: string;
}

/** Each role's settings, in the order Postgres would apply them. */
export type RoleSettings = Map<string, Array<[name: string, value: string]>>;

export interface SchemaCache {
  tables: Map<string, Column[]>;
  roleSettings: RoleSettings;
}

export async function loadSchemaCache(db: Queryable): Promise<SchemaCache> {
  const columns = await db.query<{ table: string; name: string; type: string }>(
    `select c.relname as table, a.attname as name, pg_catalog.format_type(a.atttypid, null) as type
       from pg_catalog.pg_class c
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       join pg_catalog.pg_attribute a on a.attrelid = c.oid
      where n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm', 'f')
        and a.attnum > 0 and not a.attisdropped
      order by c.relname, a.attnum`,
    [EXPOSED_SCHEMA],
  );
  const tables = new Map<string, Column[]>();
  for (const { table, name, type } of columns.rows) {
    if (!tables.has(table)) tables.set(table, []);
    tables.get(table)!.push({ name, type });
  }

  // Settings for this database come after those for all databases, so they win.
  const settings = await db.query<{ role: string; config: string[] }>(
    `select r.rolname as role, s.setconfig as config
       from pg_catalog.pg_db_role_setting s
       join pg_catalog.pg_roles r on r.oid = s.setrole
      where s.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = current_database()))
      order by s.setdatabase`,
  );
  const roleSettings: RoleSettings = new Map();
  for (const { role, config } of settings.rows) {
    if (!roleSettings.has(role)) roleSettings.set(role, []);
    // Each entry reads `name=value`.
    for (const entry of config) {
      const equals = entry.indexOf("=");
      roleSettings.get(role)!.push([entry.slice(0, equals), entry.slice(equals + 1)]);
    }
  }
  return { tables, roleSettings };
}
