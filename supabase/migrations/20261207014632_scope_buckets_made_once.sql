-- A sign-up reads each scope's limits from one row made for it (private.sign_up_buckets), rather
-- than joining and converting the limits' tables twice a sign-up; private.apply_sign_up_limits()
-- makes those rows with the failures' sketches, and replaces private.make_failure_cells(), whose
-- name said less than it now does: every migration that changes a limit or a scope ends with it.
-- As in supabase/schemas/25_sign_up_rules.sql.

create function private.client_named(secret bytea, scope text, client_in_scope text)
returns bytea language plpgsql immutable set search_path = '' as $$
begin
  return secret || convert_to(scope || ':' || client_in_scope, 'UTF8');
end;
$$;

create or replace function private.clients_of(client text)
returns table (scope text, named bytea)
language plpgsql stable set search_path = '' as $$
begin
  return query
    select s.name, private.client_named(c.secret, s.name, private.client_in_scope(client, s.ipv4_prefix, s.ipv6_prefix))
      from private.sign_up_scopes s, private.client_key_secret c;
end;
$$;

create table private.sign_up_buckets (
  scope text primary key,
  ipv4_prefix integer not null,
  ipv6_prefix integer not null,
  shards integer not null,
  limits private.sign_up_limit[] not null
);
comment on table private.sign_up_buckets is
  'Each scope''s limits as a sign-up reads them: its prefixes, shards and buckets in milliseconds, made by private.apply_sign_up_limits().';

create function private.wanted_sign_up_buckets()
returns table (scope text, ipv4_prefix integer, ipv6_prefix integer, shards integer, limits private.sign_up_limit[])
language plpgsql stable set search_path = '' as $$
begin
  return query
    select s.name, s.ipv4_prefix, s.ipv6_prefix, s.shards,
           array(select row(l.kind, l.name, l.max_sign_ups, b.window_ms, round(b.window_ms * s.shards / l.max_sign_ups::numeric))::private.sign_up_limit
                   from private.sign_up_limits l
                  cross join lateral (select (extract(epoch from l.window_length) * 1000)::bigint as window_ms) b
                  where l.per = s.name
                  order by l.kind, l.window_length)
      from private.sign_up_scopes s;
end;
$$;

create or replace function private.sources_of(client text, sign_up_id uuid, out address private.sign_up_source,
                                   out network private.sign_up_source)
language plpgsql stable set search_path = '' as $$
declare
  scope record;
  source private.sign_up_source;
begin
  for scope in
    select b.scope, b.ipv4_prefix, b.ipv6_prefix, b.shards, b.limits, c.secret
      from private.sign_up_buckets b, private.client_key_secret c
     where cardinality(b.limits) > 0
  loop
    source := row(scope.scope,
                  pg_catalog.sha256(private.client_named(scope.secret, scope.scope,
                                                         private.client_in_scope(client, scope.ipv4_prefix, scope.ipv6_prefix))
                                    || convert_to(case when scope.shards > 1
                                                    then '#' || pg_catalog.get_byte(pg_catalog.uuid_send(sign_up_id), 15) % scope.shards
                                                    else '' end, 'UTF8')),
                  scope.limits, null);
    if scope.scope = 'address' then address := source; else network := source; end if;
  end loop;
end;
$$;

drop trigger failure_sketches_follow_limits on private.sign_up_limits;
drop trigger failure_sketches_follow_scopes on private.sign_up_scopes;
drop function private.check_failure_sketches();
drop procedure private.make_failure_cells();

create procedure private.apply_sign_up_limits()
language plpgsql set search_path = '' as $$
declare
  most_at_once constant integer := 3000;
  changes integer;
  ceiling record;
  statement text;
begin
  create temporary table changed_sketches on commit drop as
    select w.*, coalesce(f.sketch_rows, 0) as made_rows, coalesce(f.sketch_width, 0) as made_width,
           (f.bucket).cost_ms as made_cost_ms
      from private.wanted_failure_sketches() w left join private.failure_sketches f on f.name = w.name;
  -- A cell's name holds its ceiling's, within PostgreSQL's 63 bytes a name.
  if exists (select from pg_temp.changed_sketches c where octet_length(c.name) > 40) then
    raise exception 'A ceiling''s name is at most 40 bytes: its cells are named after it';
  end if;
  -- Cells made or dropped, and kept cells altered (emptied, or given a new cost).
  select coalesce(sum(c.sketch_rows * c.sketch_width + c.made_rows * c.made_width - 2 * kept.cells
                      + case when c.made_width <> c.sketch_width or c.made_cost_ms <> (c.bucket).cost_ms then kept.cells else 0 end), 0)
    into changes
    from pg_temp.changed_sketches c
   cross join lateral (select least(c.sketch_rows, c.made_rows) * least(c.sketch_width, c.made_width) as cells) kept;
  if changes > most_at_once then
    raise exception 'This change of the failures'' sketches makes, drops or alters % cells in one transaction, more than %', changes, most_at_once
      using hint = 'A 20-connection server cannot lock that many at once: change the sizes in steps of at most 3,000 cells, a migration each.';
  end if;
  for ceiling in select * from pg_temp.changed_sketches loop
    -- The surplus dropped, the kept altered, the missing made (and no API role granted any).
    foreach statement in array array[
      (select 'drop sequence ' || string_agg(private.failure_cell(ceiling.name, r, col), ', ')
         from generate_series(0, ceiling.made_rows - 1) r, generate_series(0, ceiling.made_width - 1) col
        where r >= ceiling.sketch_rows or col >= ceiling.sketch_width),
      (select string_agg(format('alter sequence %s increment by %s%s', private.failure_cell(ceiling.name, r, col),
                                (ceiling.bucket).cost_ms,
                                case when ceiling.made_width <> ceiling.sketch_width then ' restart with 0' else '' end), '; ')
         from generate_series(0, least(ceiling.made_rows, ceiling.sketch_rows) - 1) r,
              generate_series(0, least(ceiling.made_width, ceiling.sketch_width) - 1) col
        where ceiling.made_width <> ceiling.sketch_width or ceiling.made_cost_ms <> (ceiling.bucket).cost_ms),
      (select string_agg(format('create sequence %s as bigint minvalue 0 increment by %s', cell, (ceiling.bucket).cost_ms), '; ')
              || '; revoke all on sequence ' || string_agg(cell, ', ') || ' from public, anon, authenticated, service_role'
         from generate_series(0, ceiling.sketch_rows - 1) r, generate_series(0, ceiling.sketch_width - 1) col,
              lateral (select private.failure_cell(ceiling.name, r, col) as cell) named
        where r >= ceiling.made_rows or col >= ceiling.made_width)]
    loop
      if statement is not null then
        execute statement;
      end if;
    end loop;
  end loop;
  -- Every ceiling's sketch, bucket, cells and place, whatever changed; a ceiling removed keeps its
  -- row and cells, with no place.
  update private.failure_sketches set charge_order = null;
  insert into private.failure_sketches as f (name, sketch_rows, sketch_width, bucket, cells, per, charge_order)
  select c.name, c.sketch_rows, c.sketch_width, c.bucket,
         array(select private.failure_cell(c.name, r, col)::regclass
                 from generate_series(0, c.sketch_rows - 1) r, generate_series(0, c.sketch_width - 1) col
                order by r, col),
         c.per, c.charge_order
    from pg_temp.changed_sketches c
  on conflict (name) do update
    set (sketch_rows, sketch_width, bucket, cells, per, charge_order)
      = (excluded.sketch_rows, excluded.sketch_width, excluded.bucket, excluded.cells, excluded.per, excluded.charge_order);
  drop table pg_temp.changed_sketches;
  analyze private.failure_sketches;
  -- Every scope's buckets.
  delete from private.sign_up_buckets;
  insert into private.sign_up_buckets select * from private.wanted_sign_up_buckets();
  analyze private.sign_up_buckets;
end;
$$;
call private.apply_sign_up_limits();

create function private.check_limits_applied()
returns trigger language plpgsql set search_path = '' as $$
begin
  if exists (select w.name, w.per, w.sketch_rows, w.sketch_width, w.bucket, w.charge_order from private.wanted_failure_sketches() w
             except
             select f.name, f.per, f.sketch_rows, f.sketch_width, f.bucket, f.charge_order from private.failure_sketches f)
     or exists (select from private.failure_sketches f
                 where f.charge_order is not null and f.name not in (select w.name from private.wanted_failure_sketches() w))
     or exists ((select * from private.wanted_sign_up_buckets() except select * from private.sign_up_buckets)
                union all
                (select * from private.sign_up_buckets except select * from private.wanted_sign_up_buckets())) then
    raise exception 'This change of private.sign_up_limits or private.sign_up_scopes leaves what the rules read of them as it was: run "call private.apply_sign_up_limits();" after it, in the same transaction (the same migration)';
  end if;
  return null;
end;
$$;

create constraint trigger sign_up_limits_applied
  after insert or update or delete on private.sign_up_limits
  deferrable initially deferred
  for each row execute function private.check_limits_applied();
create constraint trigger sign_up_scopes_applied
  after update on private.sign_up_scopes
  deferrable initially deferred
  for each row execute function private.check_limits_applied();

revoke all on table private.sign_up_buckets from public, anon, authenticated, service_role;
revoke all on function private.client_named(bytea, text, text), private.wanted_sign_up_buckets(), private.check_limits_applied()
  from public, anon, authenticated, service_role;
revoke all on procedure private.apply_sign_up_limits() from public, anon, authenticated, service_role;
