-- Supabase's API roles as its Postgres image creates them (supabase/postgres,
-- migrations/db/init-scripts/00000000000000-initial-schema.sql), for a database that lacks
-- them. Roles belong to the whole server: each is set up only when it is created, so later
-- migrations may change it. What belongs to a database (the use of `public`, default
-- privileges) is given to every database this runs in.
do $$
begin
  if not exists (select from pg_catalog.pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
    alter role anon set statement_timeout = '3s';
  end if;

  if not exists (select from pg_catalog.pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
    alter role authenticated set statement_timeout = '8s';
  end if;

  if not exists (select from pg_catalog.pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;

  -- The role PostgREST logs in as and switches from to the request's role.
  if not exists (select from pg_catalog.pg_roles where rolname = 'authenticator') then
    create role authenticator login noinherit;
    grant anon, authenticated, service_role to authenticator;
  end if;
end
$$;

grant usage on schema public to anon, authenticated, service_role;

-- What hosted projects give everything the project's `postgres` role creates in `public`: all
-- privileges to the three API roles (the same init script). Newer projects no longer do this,
-- so migrations must not rely on it either way: they revoke, then grant exactly what is needed.
alter default privileges for role postgres in schema public grant all on tables to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on functions to anon, authenticated, service_role;
alter default privileges for role postgres in schema public grant all on sequences to anon, authenticated, service_role;

-- Hosted projects let `postgres` choose PostgREST's pre-request function, as Supabase's "Securing
-- your API" does (`alter role authenticator set pgrst.db_pre_request = …`): supautils runs that
-- elevated. A plain PostgreSQL needs the parameter granted (15 and later) and, from 16 on, the
-- admin option on authenticator, which hosted projects on 17 give `postgres`.
grant set on parameter "pgrst.db_pre_request" to postgres;
do $$
begin
  if current_setting('server_version_num')::integer >= 160000 then
    grant authenticator to postgres with admin option;
  end if;
end
$$;
