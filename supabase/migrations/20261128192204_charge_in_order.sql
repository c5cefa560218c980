-- The charge reads one small table in order: each ceiling's row in private.sign_up_ceilings now
-- holds its cells (row after row), its scope, its bucket and its place in the charge's order (null
-- once removed), kept by private.make_ceiling_cells with the cells, and private.charge_request
-- charges every ceiling itself, without a query per cell, a call per ceiling or a lookup of a cell
-- by its name (private.charge_ceiling goes). The counts are kept. As in
-- supabase/schemas/25_sign_up_rules.sql.

alter table private.sign_up_ceilings
  add column cells regclass[],
  add column per text,
  add column max_sign_ups integer,
  add column window_ms bigint,
  add column charge_order integer;
comment on table private.sign_up_ceilings is
  'Each ceiling as the charge reads it: its sketch (rows x width cells, sequences, row after row), the milliseconds each attempt costs, its scope and bucket, and its place in the order ceilings are charged (null once removed).';

create or replace function private.make_ceiling_cells()
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
  -- Every ceiling's cells, limit and place, whatever changed: the address's ceilings first, then
  -- the network's, each the shortest window first (private.charge_request says why).
  update private.sign_up_ceilings c
     set cells = array(select private.ceiling_cell(c.name, r, col)::regclass
                         from generate_series(0, c.ceiling_rows - 1) r, generate_series(0, c.ceiling_width - 1) col
                        order by r, col),
         (per, max_sign_ups, window_ms, charge_order) =
         (select l.per, l.max_sign_ups, (extract(epoch from l.window_length) * 1000)::bigint, l.place
            from (select l.*, row_number() over (order by l.per = 'network', l.window_length, l.name)::integer as place
                    from private.sign_up_limits l where l.kind = 'ceiling') l
           where l.name = c.name);
  analyze private.sign_up_ceilings;
end;
$$;

-- It now says whether this call charged the request, so that a caller can run it as an
-- assignment (a PERFORM runs through the executor).
drop function private.charge_ceiling(text, integer, bigint, bigint, integer[]);
drop function private.charge_request();
create function private.charge_request()
returns boolean language plpgsql security definer set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  since_2026 constant float8 := 1767225600; -- 2026-01-01, in seconds since 1970
  scopes text[];
  named bytea[];
  ceiling record;
  cells regclass[];
  columns integer[];
  held bigint[];
  least_held bigint;
  now_ms bigint;
  full_ms bigint;
  setting text;
begin
  if current_setting('early_access.charged', true) = 'yes' then
    return false;
  end if;
  select array_agg(n.scope), array_agg(n.named) into scopes, named from private.clients_of(private.client_address()) n;
  for ceiling in
    select c.name, c.per, c.max_sign_ups, c.window_ms, c.cost_ms, c.ceiling_rows, c.ceiling_width, c.cells
      from private.sign_up_ceilings c where c.charge_order is not null order by c.charge_order
  loop
    cells := ceiling.cells;
    columns := private.ceiling_columns(pg_catalog.sha256(named[array_position(scopes, ceiling.per)]),
                                       ceiling.ceiling_rows, ceiling.ceiling_width);
    for r in 1 .. ceiling.ceiling_rows loop
      columns[r] := (r - 1) * ceiling.ceiling_width + columns[r] + 1; -- the cell's place in `cells`
      held[r] := pg_catalog.nextval(cells[columns[r]]);
    end loop;
    now_ms := round((private.sign_up_clock() - since_2026) * 1000);
    full_ms := ceiling.window_ms + ceiling.max_sign_ups / 2;
    -- The least-held cell as charged: a drained one is under full either way, so the lift
    -- changes no answer.
    least_held := null;
    for r in 1 .. ceiling.ceiling_rows loop
      least_held := least(least_held, held[r]);
      if held[r] - ceiling.cost_ms < now_ms then
        held[r] := pg_catalog.setval(cells[columns[r]], now_ms + ceiling.cost_ms);
      elsif held[r] - now_ms > full_ms then
        held[r] := pg_catalog.setval(cells[columns[r]], least(held[r] - ceiling.cost_ms, now_ms + full_ms));
      end if;
    end loop;
    if least_held - now_ms > full_ms then
      -- Retry-After: until the least-held cell, capped at full, has room for one more.
      perform private.refuse(ceiling.max_sign_ups, ceiling.name,
                             greatest(1, ceil(least(least_held - now_ms - full_ms, ceiling.cost_ms) / 1000.0))::integer);
    end if;
  end loop;
  setting := set_config('early_access.charged', 'yes', true);
  return true;
end;
$$;

create or replace function request_gate.check_request()
returns void language plpgsql security definer set search_path = '' as $$
declare
  charged boolean;
begin
  -- The request's role (current_user is this function's owner).
  if current_setting('role') not in ('anon', 'authenticated') then
    return;
  end if;
  if current_setting('request.method', true) = 'POST' and current_setting('request.path', true) = '/early_access' then
    charged := private.charge_request();
    return;
  end if;
  raise exception using
    errcode = 'insufficient_privilege',
    message = 'permission denied: this key may only add a sign-up (POST /early_access)';
end;
$$;

create or replace function private.one_sign_up_per_request()
returns trigger language plpgsql security definer set search_path = '' as $$
declare
  setting text;
begin
  if current_setting('role') in ('anon', 'authenticated') then
    if current_setting('early_access.sign_up_row', true) <> '' then
      raise exception 'Only one sign-up per request' using hint = 'Send one row at a time.';
    end if;
    setting := set_config('early_access.sign_up_row', new.id::text, true);
  end if;
  return new;
end;
$$;

create or replace function private.admit_sign_up()
returns trigger language plpgsql security definer
set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  at float8;
  sources record;
  address private.sign_up_source;
  network private.sign_up_source;
  counting record;
  charged boolean;
  setting text;
begin
  -- The role the request runs as (current_user is this function's owner). A missing email
  -- counts for nothing: the NOT NULL constraint refuses it next.
  if current_setting('role') not in ('anon', 'authenticated') or new.email is null then
    setting := set_config('early_access.admitted_sign_up', new.id::text, true);
    return new;
  end if;
  charged := private.charge_request();
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
      setting := set_config('early_access.duplicate', 'held back', true);
      return null;
    end if;
    setting := set_config('early_access.admitted_sign_up', new.id::text, true);
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

  setting := set_config('early_access.admitted_sign_up', new.id::text, true);
  return new;
end;
$$;

revoke all on function private.make_ceiling_cells(), private.charge_request() from public, anon, authenticated, service_role;

-- The new columns filled.
select private.make_ceiling_cells();
