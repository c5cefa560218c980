-- Ceilings that nobody rides free behind, counted without locks: each ceiling moves
-- from 256 slots, each counting one client under advisory locks, to a count-min sketch of leaky
-- buckets, rows x width cells (sequences) charged with nextval, whose sizes live in
-- private.sign_up_scopes. One entry point charges a request once, private.charge_request, which
-- the trigger calls and PostgREST's pre-request gate may call before it. The slots, their locks,
-- their table and their functions go; the counts start afresh. As in
-- supabase/schemas/20_sign_up_limits.sql and 25_sign_up_rules.sql.

-- The slots: the triggers that made them, their sequences, their table, the charge that locked them.
drop trigger sign_up_ceilings_follow_limits on private.sign_up_limits;
drop trigger sign_up_ceilings_follow_counting on private.sign_up_counting;
do $$
begin
  execute (select string_agg(format('drop sequence %s', slot), '; ')
             from private.sign_up_ceilings c, unnest(c.slots) slot);
end;
$$;
drop table private.sign_up_ceilings;
drop function private.charge_attempt(private.sign_up_source, private.sign_up_source, float8),
  private.make_ceiling_slots(), private.ceilings_keep_their_slots();
drop type private.ceiling_slot;

-- 20_sign_up_limits.sql: each scope's sketch size; the slots' number goes.
alter table private.sign_up_scopes
  add column ceiling_rows integer check (ceiling_rows between 1 and 8),
  add column ceiling_width integer check (ceiling_width between 1 and 3000);
update private.sign_up_scopes set (ceiling_rows, ceiling_width) = (case name when 'address' then 4 else 3 end,
                                                                   case name when 'address' then 256 else 64 end);
alter table private.sign_up_scopes alter column ceiling_rows set not null, alter column ceiling_width set not null;
comment on table private.sign_up_scopes is
  'What one client is, per scope of the sign-up limits, in how many shards its paces are counted, and the size of its ceilings'' sketches.';
alter table private.sign_up_counting drop column ceiling_slots;
comment on table private.sign_up_counting is 'How the sign-up rules keep their paces: how fast empty ones are forgotten.';
analyze private.sign_up_scopes, private.sign_up_counting;

-- 25_sign_up_rules.sql: a source no longer carries its client's key, which the charge takes
-- from clients_of.
alter type private.sign_up_source drop attribute client_key;

-- The client in each scope, named under the database's key: the key, then the scope's name and
-- the client in it (`network:192.0.2.0`), so no two scopes share one. Its SHA-256 is the client's
-- key in that scope, which picks its cells in the scope's ceilings; the sources' keys of its paces
-- are hashes of the same (sources_of).
create function private.clients_of(client text)
returns table (scope text, named bytea)
language plpgsql stable set search_path = '' as $$
begin
  return query
    select s.name, c.secret || convert_to(s.name || ':' || private.client_in_scope(client, s.ipv4_prefix, s.ipv6_prefix), 'UTF8')
      from private.sign_up_scopes s, private.client_key_secret c;
end;
$$;

-- The sources a sign-up from `client` counts in, one per scope (else null), with what each holds
-- now (a plain read: no lock). A source's key is the client's key in its scope (clients_of), or,
-- for a scope of several shards, a hash of the client with the shard this sign-up's paces count
-- in, at random (`network:192.0.2.0#3`). A sign-up in a shard counts `shards` times in that
-- shard's paces, each of which holds its share of the pace.
create or replace function private.sources_of(client text, out address private.sign_up_source, out network private.sign_up_source)
language plpgsql volatile set search_path = '' as $$
declare
  source private.sign_up_source;
begin
  for source in
    select s.name, k.source_key, paces.seconds_per_sign_up,
           (select stored.empty_at from private.sign_up_sources stored where stored.source_key = k.source_key), null
      from private.clients_of(client) n join private.sign_up_scopes s on s.name = n.scope,
           lateral (select pg_catalog.jsonb_object_agg(l.kind || ' ' || l.name, extract(epoch from l.window_length)::float8 * s.shards / l.max_sign_ups)
                             as seconds_per_sign_up
                      from private.sign_up_limits l where l.per = s.name and l.kind = 'pace') paces,
           lateral (select pg_catalog.sha256(n.named || convert_to(case when s.shards > 1 then '#' || floor(pg_catalog.random() * s.shards)::integer else '' end, 'UTF8'))
                             as source_key) k
  loop
    if source.scope = 'address' then address := source; else network := source; end if;
  end loop;
end;
$$;

-- The sketch each ceiling has now: its size and the cost per attempt its cells were made with, so
-- that a change makes only what it changes. A ceiling that is removed keeps its cells, unused,
-- until it is added again.
create table private.sign_up_ceilings (
  name text primary key,
  ceiling_rows integer not null,
  ceiling_width integer not null,
  cost_ms bigint not null
);
comment on table private.sign_up_ceilings is 'The sketch of each ceiling: rows x width cells (sequences), and the milliseconds each attempt costs.';

-- The name of a ceiling's cell: `private."ceiling per address per hour r2 c17"`, row 2, column 17.
create function private.ceiling_cell(ceiling text, sketch_row integer, sketch_column integer)
returns text language plpgsql immutable set search_path = '' as $$
begin
  return format('private.%I', format('ceiling %s r%s c%s', ceiling, sketch_row, sketch_column));
end;
$$;

-- A client's column in each row of a sketch: 4 bytes of its key a row, so that the rows are
-- independent hashes (each a big-endian 32-bit number, modulo the width). Plain PL/pgSQL
-- arithmetic: a query over generate_series with hex casts cost six times as much a sign-up.
create function private.ceiling_columns(client_key bytea, sketch_rows integer, width integer)
returns integer[] language plpgsql immutable set search_path = '' as $$
declare
  columns integer[] := '{}';
begin
  for r in 0 .. sketch_rows - 1 loop
    columns := columns || ((pg_catalog.get_byte(client_key, 4 * r)::bigint << 24 | pg_catalog.get_byte(client_key, 4 * r + 1) << 16
                            | pg_catalog.get_byte(client_key, 4 * r + 2) << 8 | pg_catalog.get_byte(client_key, 4 * r + 3)) % width)::integer;
  end loop;
  return columns;
end;
$$;

-- The ceilings whose cells are not as their scope's sketch and their cost say, with what to
-- change: `made_…` is what they have (no cells, for a new one), and `changes` how many cells a change makes,
-- drops or alters. Of a resized sketch, a cell whose name still fits is kept, the surplus dropped
-- and the missing made; the kept are emptied if the width changed (their columns now hold other
-- clients), and take the new cost if it changed. A change of rows alone keeps each kept row's
-- columns, and its counts.
create function private.ceiling_changes()
returns table (name text, ceiling_rows integer, ceiling_width integer, cost_ms bigint,
               made_rows integer, made_width integer, made_cost_ms bigint, changes integer)
language plpgsql stable set search_path = '' as $$
begin
  return query
    select l.name, s.ceiling_rows, s.ceiling_width, wanted.cost_ms,
           coalesce(c.ceiling_rows, 0), coalesce(c.ceiling_width, 0), c.cost_ms,
           s.ceiling_rows * s.ceiling_width + coalesce(c.ceiling_rows * c.ceiling_width, 0) - 2 * kept.cells
             + case when c.ceiling_width <> s.ceiling_width or c.cost_ms <> wanted.cost_ms then kept.cells else 0 end
      from private.sign_up_limits l
      join private.sign_up_scopes s on s.name = l.per
      left join private.sign_up_ceilings c on c.name = l.name
     cross join lateral (select round(extract(epoch from l.window_length) * 1000 / l.max_sign_ups)::bigint as cost_ms) wanted
     cross join lateral (select least(s.ceiling_rows, coalesce(c.ceiling_rows, 0)) * least(s.ceiling_width, coalesce(c.ceiling_width, 0))
                                  as cells) kept
     where l.kind = 'ceiling'
       and (c.ceiling_rows, c.ceiling_width, c.cost_ms) is distinct from (s.ceiling_rows, s.ceiling_width, wanted.cost_ms);
end;
$$;

-- Makes the cells of every ceiling as ceiling_changes says, in one transaction. Each cell made,
-- dropped or altered holds a lock until the transaction ends, in the server's shared lock table,
-- which PostgreSQL sizes by its connections: on a 20-connection server (measured here, one
-- transaction on an idle server) 4,000 sequences made, dropped or set pass on PostgreSQL 15 and
-- 17, 4,500 fail on 15 and 5,000 on 17 ("out of shared memory"). So a change of more than 3,000
-- cells is refused, leaving room for the requests that run meanwhile: make it in steps, a
-- migration each (tests/database/ceilings.test.ts makes the largest on such a server).
create function private.make_ceiling_cells()
returns void language plpgsql set search_path = '' as $$
declare
  most_at_once constant integer := 3000;
  changes integer := (select coalesce(sum(c.changes), 0) from private.ceiling_changes() c);
  ceiling record;
  statement text;
begin
  -- A cell's name holds its ceiling's, within PostgreSQL's 63 bytes a name.
  if exists (select from private.ceiling_changes() c where octet_length(c.name) > 40) then
    raise exception 'A ceiling''s name is at most 40 bytes: its cells are named after it';
  end if;
  if changes > most_at_once then
    raise exception 'This change of the ceilings'' sketches makes, drops or alters % cells in one transaction, more than %', changes, most_at_once
      using hint = 'A 20-connection server cannot lock that many at once: change the sizes in steps of at most 3,000 cells, a migration each.';
  end if;
  for ceiling in select * from private.ceiling_changes() loop
    -- The surplus dropped, the kept altered, the missing made (and no API role granted any).
    foreach statement in array array[
      (select 'drop sequence ' || string_agg(private.ceiling_cell(ceiling.name, r, col), ', ')
               from generate_series(0, ceiling.made_rows - 1) r, generate_series(0, ceiling.made_width - 1) col
              where r >= ceiling.ceiling_rows or col >= ceiling.ceiling_width),
      (select string_agg(
                      case when ceiling.made_width <> ceiling.ceiling_width
                           then format('alter sequence %s increment by %s restart with 0', private.ceiling_cell(ceiling.name, r, col), ceiling.cost_ms)
                           else format('alter sequence %s increment by %s', private.ceiling_cell(ceiling.name, r, col), ceiling.cost_ms) end, '; ')
               from generate_series(0, least(ceiling.made_rows, ceiling.ceiling_rows) - 1) r,
                    generate_series(0, least(ceiling.made_width, ceiling.ceiling_width) - 1) col
              where ceiling.made_width <> ceiling.ceiling_width or ceiling.made_cost_ms <> ceiling.cost_ms),
      (select string_agg(format('create unlogged sequence %s as bigint minvalue 0 increment by %s', cell, ceiling.cost_ms), '; ')
                    || '; revoke all on sequence ' || string_agg(cell, ', ') || ' from public, anon, authenticated, service_role'
               from generate_series(0, ceiling.ceiling_rows - 1) r, generate_series(0, ceiling.ceiling_width - 1) col,
                    lateral (select private.ceiling_cell(ceiling.name, r, col) as cell) named
              where r >= ceiling.made_rows or col >= ceiling.made_width)]
    loop
      if statement is not null then
        execute statement;
      end if;
    end loop;
    insert into private.sign_up_ceilings as c (name, ceiling_rows, ceiling_width, cost_ms)
    values (ceiling.name, ceiling.ceiling_rows, ceiling.ceiling_width, ceiling.cost_ms)
    on conflict on constraint sign_up_ceilings_pkey do update
      set ceiling_rows = excluded.ceiling_rows, ceiling_width = excluded.ceiling_width, cost_ms = excluded.cost_ms;
  end loop;
  analyze private.sign_up_ceilings;
end;
$$;

create function private.ceilings_keep_their_cells()
returns trigger language plpgsql set search_path = '' as $$
begin
  perform private.make_ceiling_cells();
  return null;
end;
$$;

create trigger sign_up_ceilings_follow_limits
  after insert or update on private.sign_up_limits
  for each statement execute function private.ceilings_keep_their_cells();
create trigger sign_up_ceilings_follow_scopes
  after update on private.sign_up_scopes
  for each statement execute function private.ceilings_keep_their_cells();
select private.make_ceiling_cells();

-- Charges one attempt to one ceiling of a client, in its cell of each row (`columns`), then
-- judges it; refused (429) past the ceiling, naming it, with the seconds until one more fits.
--   - Charge first: nextval, in every row. Then the clock, so that no wait comes between the
--     instant and the count it judges (an instant read before waiting for a lock made a request
--     look older than those charged meanwhile, and refused the first of a keynote's crowd).
--   - A cell that had drained (empty before this attempt) is lifted to now plus this attempt.
--     Racy only on an idle cell: attempts charged to it between the first one's nextval and the
--     last lift are lost, at most as many as run at once (the API's connections), once per idle
--     spell, as a busy cell is never lifted.
--   - The client is over the ceiling when even its least-held cell holds more than the bucket:
--     the window, and half a millisecond per attempt it holds for each attempt's rounding.
--   - A cell past full gives this attempt back and is capped at full: a flood of refusals keeps
--     its cells full but no fuller, so a stranger sharing one waits for one attempt to drain, not
--     for days, and the flood itself gets one more each time one drains, as a bucket does. (The
--     setval races as the lift does: an attempt charged in between is lost, or a refusal kept.)
--     Retry-After: the seconds until the least-held cell has room for one more.
create function private.charge_ceiling(ceiling text, max_sign_ups integer, window_ms bigint, cost_ms bigint,
                                       columns integer[])
returns void language plpgsql set search_path = '' as $$
declare
  since_2026 constant float8 := 1767225600; -- 2026-01-01, in seconds since 1970
  full_ms bigint := window_ms + max_sign_ups / 2;
  cells regclass[];
  held bigint[];
  now_ms bigint;
  count_ms bigint;
begin
  for r in 1 .. cardinality(columns) loop
    cells[r] := private.ceiling_cell(ceiling, r - 1, columns[r])::regclass;
    held[r] := pg_catalog.nextval(cells[r]);
  end loop;
  now_ms := round((private.sign_up_clock() - since_2026) * 1000);
  for r in 1 .. cardinality(cells) loop
    if held[r] - cost_ms < now_ms then
      held[r] := now_ms + cost_ms;
      perform pg_catalog.setval(cells[r], held[r]);
    end if;
    count_ms := least(count_ms, held[r] - now_ms);
    if held[r] - now_ms > full_ms then
      held[r] := least(held[r] - cost_ms, now_ms + full_ms);
      perform pg_catalog.setval(cells[r], held[r]);
    end if;
  end loop;
  if count_ms > full_ms then
    perform private.refuse(max_sign_ups, ceiling,
                           greatest(1, ceil(((select min(h) from unnest(held) h) + cost_ms - now_ms - full_ms) / 1000.0))::integer);
  end if;
end;
$$;

-- Charges the request's attempt to its client's ceilings, once per transaction, before anything
-- can tell a listed address from a new one: PostgREST's pre-request gate calls it for every
-- visitor's POST to the list, before its statement runs, and the trigger that admits a sign-up
-- calls it too, which does nothing where the gate has charged. The address's ceilings first, then
-- the network's, each the hour's before the day's, up to the first the client is past, which
-- refuses it: each ceiling counts what the ones before let through, so an address flooding past
-- its own ceiling fills neither its day's nor its network's (its neighbours keep their room).
-- Runs with its owner's rights, whoever calls it; no API role may call it.
create function private.charge_request()
returns void language plpgsql security definer set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  ceiling record;
begin
  if current_setting('early_access.charged', true) = 'yes' then
    return;
  end if;
  for ceiling in
    select l.name, l.max_sign_ups, (extract(epoch from l.window_length) * 1000)::bigint as window_ms, c.cost_ms,
           private.ceiling_columns(pg_catalog.sha256(n.named), c.ceiling_rows, c.ceiling_width) as columns
      from private.clients_of(private.client_address()) n
      join private.sign_up_limits l on l.per = n.scope and l.kind = 'ceiling'
      join private.sign_up_ceilings c on c.name = l.name
     order by n.scope = 'network', l.window_length, l.name
  loop
    perform private.charge_ceiling(ceiling.name, ceiling.max_sign_ups, ceiling.window_ms, ceiling.cost_ms, ceiling.columns);
  end loop;
  perform set_config('early_access.charged', 'yes', true);
end;
$$;

-- Admits a visitor's sign-up: charges the request's attempt, if the gate has not (refused past a
-- ceiling), then, for a new address, counts it in its paces and marks it past one. Fires after
-- early_access_1_check: a sign-up the checks refuse is charged by the gate alone. One plan for
-- all (force_generic_plan), not one per client.
create or replace function private.admit_sign_up()
returns trigger language plpgsql security definer
set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  at float8;
  sources record;
  address private.sign_up_source;
  network private.sign_up_source;
  counting record;
begin
  -- The role the request runs as (current_user is this function's owner). A missing email
  -- counts for nothing: the NOT NULL constraint refuses it next.
  if current_setting('role') not in ('anon', 'authenticated') or new.email is null then
    perform set_config('early_access.admitted_sign_up', new.id::text, true);
    return new;
  end if;
  perform private.charge_request();
  at := private.sign_up_clock();
  sources := private.sources_of(private.client_address());
  address := sources.address;
  network := sources.network;

  -- A listed address would fail at the unique constraint. It is held back from the insert and
  -- answered as the constraint would, once its rows are all seen (private.refuse_duplicate). An
  -- upsert that ignores duplicates goes on: with `on_conflict=email` it succeeds with no row;
  -- without, PostgREST's conflict is on the id, and the email's constraint fails it. Either way
  -- nothing is stored, so no pace counts it.
  if exists (select from public.early_access e where e.email = new.email) then
    if coalesce(current_setting('request.headers', true)::json ->> 'prefer', '') !~ 'resolution=ignore-duplicates' then
      perform set_config('early_access.duplicate', 'held back', true);
      return null;
    end if;
    perform set_config('early_access.admitted_sign_up', new.id::text, true);
    return new;
  end if;
  -- Sign-ups of one source take turns here, each judged when it holds the lock.
  address := private.count_in_source(address, at);
  network := private.count_in_source(network, at);
  if not (coalesce(address.added, true) and coalesce(network.added, true)) then
    perform private.mark_past_pace(new.id, address, network, private.sign_up_clock()); -- 30_marks.sql
  end if;
  -- Some sign-ups that add a source (by its key, so at random) forget a few empty ones: sign-ups
  -- add at most two rows each and look at more on average, so a backlog drains.
  if address.added or network.added then
    select * into counting from private.sign_up_counting;
    if get_byte((coalesce(address, network)).source_key, 0) < 256 / counting.forget_one_in then
      perform private.forget_empty_sources((coalesce(address, network)).source_key, counting.forget_batch, at);
    end if;
  end if;

  perform set_config('early_access.admitted_sign_up', new.id::text, true);
  return new;
end;
$$;

revoke all on function private.ceiling_cell(text, integer, integer), private.ceiling_columns(bytea, integer, integer),
  private.ceiling_changes(), private.make_ceiling_cells(), private.ceilings_keep_their_cells(),
  private.charge_ceiling(text, integer, bigint, bigint, integer[]), private.charge_request(), private.clients_of(text)
  from public, anon, authenticated, service_role;
revoke all on table private.sign_up_ceilings from public, anon, authenticated, service_role;
