-- The sign-up rules: how the limits of 20_sign_up_limits.sql are kept. Supabase does not
-- rate-limit its REST API, so the database does, in two places, each deciding one thing:
--
--   - Attempts: every request that reaches the rules is charged to its client's ceilings, where
--     no rollback reaches, before anything can tell a listed address from a new one. Past a
--     ceiling, it is refused (429). Whatever fails after (a duplicate, a second row, a failing
--     cast in PostgREST's `select`, a timeout) has already paid: asking costs what signing up
--     costs.
--   - Paces: a stored sign-up is counted in its sources' paces, in a table, with the sign-up's
--     own transaction; past a pace it is marked for the owner's review (30_marks.sql).
--
-- The trigger private.admit_sign_up reads top to bottom as the steps: the charge (once per
-- request: PostgREST's pre-request gate may have charged it already), the instant, the client's
-- two sources, a duplicate held back, the paces under each source's lock, the mark, the forgetting.
--
-- Row locks, in the one order every request takes them, so that no two requests wait for each
-- other in a circle (a deadlock, which PostgREST answers with 500): the address's pace row, then
-- the network shard's, until the transaction ends. The ceilings take none: a sequence's nextval
-- waits for no one. A request's second row is refused before it takes any.

-- The key of the sources' hashes: random, made once per database, never leaves it.
create table private.client_key_secret (only_row boolean primary key default true check (only_row), secret bytea not null);
insert into private.client_key_secret (secret)
select decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');
analyze private.client_key_secret;

-- One source of a sign-up, as the steps below pass it on: its scope, its key (a keyed hash of
-- the client in the scope, and of its shard for a scope of several), the seconds one sign-up adds
-- to each of its scope's paces, their state (null for a source never seen), and whether this
-- sign-up added it (its first). A state always travels with its scope, so no step can read one
-- scope's state with the other's limits.
create type private.sign_up_source as (scope text, source_key bytea, seconds_per_sign_up jsonb,
                                       empty_at jsonb, added boolean);

-- The steps ----------------------------------------------------------------------------------
-- PL/pgSQL, each: its plans last the session, where PostgreSQL 17 plans an SQL function's body
-- again in every statement that calls it.

-- The instant the rules judge a sign-up at, in seconds since 1970: the clock when the rule runs,
-- not when its transaction began (one that waited behind a later one would otherwise look as if
-- it came first). Read through this function alone, so that a test can set it: the tests
-- replace it in a database of their own. The public roles can neither call nor replace it.
create function private.sign_up_clock()
returns float8 language plpgsql volatile set search_path = '' as $$
begin
  return extract(epoch from pg_catalog.clock_timestamp());
end;
$$;

-- The client as the edge saw it: Cloudflare's cf-connecting-ip on Supabase, else the right-most
-- x-forwarded-for entry, which the last proxy added (the client wrote the rest). A request that
-- names no client is refused with 400, rather than counted with every other such request.
create function private.client_address()
returns text language plpgsql stable set search_path = '' as $$
declare
  headers json := nullif(current_setting('request.headers', true), '')::json;
  client text := coalesce(nullif(btrim(headers ->> 'cf-connecting-ip'), ''),
                          nullif(btrim(split_part(headers ->> 'x-forwarded-for', ',', -1)), ''));
begin
  if client is null then
    raise sqlstate 'PGRST' using
      message = json_build_object('code', 'PT400', 'message', 'The client''s address is unknown', 'hint', null,
        'details', 'Sign-ups are counted per address; a request must come through the API gateway.')::text,
      detail = json_build_object('status', 400, 'headers', json_build_object())::text;
  end if;
  return client;
end;
$$;

-- The client in a scope: the network of the scope's prefix around its address (`192.0.2.0` for
-- an IPv4 /24). An IPv4 client seen through an IPv6 socket is that IPv4 client. What is no
-- address (`cafe`, `1.2.3`) is itself in every scope. (A block, not pg_input_is_valid, which
-- PostgreSQL 15 lacks; it costs nothing measurable unless the cast fails.)
create function private.client_in_scope(client text, ipv4_prefix integer, ipv6_prefix integer)
returns text language plpgsql immutable set search_path = '' as $$
declare
  ip inet;
begin
  begin
    ip := client::inet;
  exception when invalid_text_representation then
    return client;
  end;
  if ip << inet '::ffff:0.0.0.0/96' then ip := inet '0.0.0.0' + (ip - inet '::ffff:0.0.0.0'); end if;
  return host(network(set_masklen(ip, case family(ip) when 4 then ipv4_prefix else ipv6_prefix end)));
end;
$$;

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
create function private.sources_of(client text, out address private.sign_up_source, out network private.sign_up_source)
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

-- Refuses a request with 429 (PostgREST's convention for choosing the HTTP answer), naming the
-- ceiling it is past, with Retry-After the seconds until one more would fit.
create function private.refuse(max_sign_ups integer, ceiling text, retry_after integer)
returns void language plpgsql immutable set search_path = '' as $$
begin
  raise sqlstate 'PGRST' using
    message = json_build_object('code', 'PT429', 'message', 'Too many sign-ups from this address',
      'details', format('At most %s sign-ups %s.', max_sign_ups, ceiling), 'hint', 'Try again later.')::text,
    detail = json_build_object('status', 429, 'headers', json_build_object('Retry-After', retry_after::text))::text;
end;
$$;

-- Attempts --------------------------------------------------------------------------------------
-- A request that fails after the rules have looked at it rolls back everything it wrote: had its
-- count been written with it, only the requests that succeed would pay, and asking whether an
-- address is on the list (a duplicate, or a cast in `select` that fails only on a new row) would
-- cost nothing. So attempts are counted in sequences, whose nextval and setval outlive the
-- transaction.
--
-- Each ceiling is a leaky bucket per client, as every limit is (20_sign_up_limits.sql), kept in a
-- count-min sketch: `ceiling_rows` rows of `ceiling_width` cells (the scope's), each cell a
-- sequence. A client counts in one cell of each row, its column there taken from its key, the
-- same in every ceiling of its scope. A cell's value is its bucket's "theoretical arrival time",
-- the instant it is empty again, in milliseconds since 2026; its increment is the cost of one
-- attempt (the window over max_sign_ups), so nextval charges an attempt at once, atomically, and
-- waits for no lock. A cell counts everyone in it, so it never undercounts: a client's count is
-- its least-held cell, and strangers sharing a cell only raise it. Nobody rides free behind a
-- stranger; the price is that a stranger is refused where every one of its cells is full (the
-- odds are in 20_sign_up_limits.sql).

-- The ceilings as the charge reads them, one row each, so that a request reads one small table in
-- order rather than joining the limits and naming its cells: the sketch its cells were made with
-- and the cost per attempt (so that a change makes only what it changes); its cells, row after row
-- (row r, column c at r * width + c + 1); and, while it is a limit, its scope, its bucket and its
-- place in the charge's order (private.charge_request). A ceiling that is removed keeps its cells,
-- unused, until it is added again; its place is null. All kept by private.make_ceiling_cells.
create table private.sign_up_ceilings (
  name text primary key,
  ceiling_rows integer not null,
  ceiling_width integer not null,
  cost_ms bigint not null,
  cells regclass[],
  per text,
  max_sign_ups integer,
  window_ms bigint,
  charge_order integer
);
comment on table private.sign_up_ceilings is
  'Each ceiling as the charge reads it: its sketch (rows x width cells, sequences, row after row), the milliseconds each attempt costs, its scope and bucket, and its place in the order ceilings are charged (null once removed).';
-- Its cells stay in the row rather than in a TOAST table (an address's sketch is 4 kB): every
-- request reads them, and each relation a request touches costs it a lock and a lookup, here two
-- (the TOAST table and its index). A sketch too large for a page still goes out of line.
alter table private.sign_up_ceilings alter column cells set storage main;

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

-- Charges the request's attempt to its client's ceilings, once per transaction, before anything
-- can tell a listed address from a new one: PostgREST's pre-request gate calls it for every
-- visitor's POST to the list, before its statement runs, and the trigger that admits a sign-up
-- calls it too, which does nothing where the gate has charged. Runs with its owner's rights,
-- whoever calls it; no API role may call it. Each ceiling in order (sign_up_ceilings):
--   - The address's ceilings first, then the network's, each the hour's before the day's, up to
--     the first the client is past, which refuses it (429, naming it, with Retry-After the seconds
--     until one more fits): each ceiling counts what the ones before let through, so an address
--     flooding past its own ceiling fills neither its day's nor its network's (its neighbours
--     keep their room).
--   - Charge first: nextval, in the client's cell of every row. Then the clock, so that no wait
--     comes between the instant and the count it judges (an instant read before waiting for a
--     lock made a request look older than those charged meanwhile, and refused the first of a
--     keynote's crowd).
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
-- One function, in PL/pgSQL's own expressions but for two queries: a sign-up's fourteen cells
-- are most of what the rules cost, so no cell costs a query, a call or a lookup by name, and each
-- is read from its ceiling's row in place (copied into a variable, the whole array would be taken
-- apart: a thousand cells for the four used). It says whether this call charged, so that its
-- callers run it as an assignment: PL/pgSQL runs a PERFORM through the executor, an assignment of
-- a plain expression without it (hence `setting := set_config(…)` on the rules' path too).
create function private.charge_request()
returns boolean language plpgsql security definer set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  since_2026 constant float8 := 1767225600; -- 2026-01-01, in seconds since 1970
  scopes text[];
  named bytea[];
  ceiling record;
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
    columns := private.ceiling_columns(pg_catalog.sha256(named[array_position(scopes, ceiling.per)]),
                                       ceiling.ceiling_rows, ceiling.ceiling_width);
    for r in 1 .. ceiling.ceiling_rows loop
      columns[r] := (r - 1) * ceiling.ceiling_width + columns[r] + 1; -- the cell's place in `cells`
      held[r] := pg_catalog.nextval(ceiling.cells[columns[r]]);
    end loop;
    now_ms := round((private.sign_up_clock() - since_2026) * 1000);
    full_ms := ceiling.window_ms + ceiling.max_sign_ups / 2;
    -- The least-held cell as charged: a drained one is under full either way, so the lift
    -- changes no answer.
    least_held := null;
    for r in 1 .. ceiling.ceiling_rows loop
      least_held := least(least_held, held[r]);
      if held[r] - ceiling.cost_ms < now_ms then
        held[r] := pg_catalog.setval(ceiling.cells[columns[r]], now_ms + ceiling.cost_ms);
      elsif held[r] - now_ms > full_ms then
        held[r] := pg_catalog.setval(ceiling.cells[columns[r]], least(held[r] - ceiling.cost_ms, now_ms + full_ms));
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

-- Paces -----------------------------------------------------------------------------------------

-- Each source's paces (a client in one scope and shard, as a keyed hash, never its address): per
-- pace of its scope, keyed `kind name`, the instant its bucket is empty again ("theoretical
-- arrival time"), in seconds since 1970: a few values, whatever the paces' sizes. Seconds, not
-- timestamps and intervals, whose sums follow the request's time zone (`Prefer: timezone`).
-- Unlogged: a crash empties it, forgetting at most a day of pace; no WAL for it.
create unlogged table private.sign_up_sources (source_key bytea primary key, empty_at jsonb not null);
comment on table private.sign_up_sources is 'Per source (a keyed hash of the client, never its address), when each pace''s bucket is empty again.';

-- The source with one more sign-up at `at`: each bucket drained up to `at` if it emptied before,
-- then filled by one sign-up's seconds. A source never seen starts empty.
create function private.with_sign_up(source private.sign_up_source, at float8)
returns private.sign_up_source language plpgsql immutable set search_path = '' as $$
begin
  source.empty_at := (select pg_catalog.jsonb_object_agg(l.key, greatest((source.empty_at ->> l.key)::float8, at) + l.value::float8)
                        from pg_catalog.jsonb_each_text(source.seconds_per_sign_up) l);
  return source;
end;
$$;

-- The paces a source is past at `at`: those whose bucket holds more than max_sign_ups (a
-- millisecond's slack for rounding), with about how many it holds (a shard's count times the
-- shards: an estimate of the whole). A pure function of the source's state and the instant.
create function private.paces_past(source private.sign_up_source, at float8)
returns table (name text, max_sign_ups integer, sign_ups integer)
language plpgsql stable set search_path = '' as $$
begin
  return query select l.name, l.max_sign_ups, round((b.empty_at - at) / b.window_seconds * l.max_sign_ups)::integer
    from private.sign_up_limits l
   cross join lateral (select extract(epoch from l.window_length)::float8 as window_seconds,
                              (source.empty_at ->> (l.kind || ' ' || l.name))::float8 as empty_at) b
   where l.per = source.scope and l.kind = 'pace'
     and b.empty_at - at > b.window_seconds + 0.001
   order by l.window_length;
end;
$$;

-- Counts a stored sign-up at `at` in its source's paces under the source's row lock, so that
-- concurrent sign-ups of one source take turns, and each is judged at the instant it holds the
-- lock. Returns the source with the sign-up counted, and whether it added the source.
create function private.count_in_source(source private.sign_up_source, at float8)
returns private.sign_up_source language plpgsql set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  counted private.sign_up_source;
begin
  if source is null or source.seconds_per_sign_up is null then return null; end if;
  loop
    -- A source the plain read did not find is added, unless another sign-up added it since.
    if source.empty_at is null then
      counted := private.with_sign_up(source, at);
      insert into private.sign_up_sources (source_key, empty_at) values (counted.source_key, counted.empty_at)
      on conflict (source_key) do nothing;
      counted.added := found;
      if counted.added then return counted; end if;
    end if;
    -- Else it takes its turn on the source's row.
    select s.empty_at into source.empty_at from private.sign_up_sources s where s.source_key = source.source_key for update;
    if found then
      counted := private.with_sign_up(source, at);
      update private.sign_up_sources s set empty_at = counted.empty_at where s.source_key = counted.source_key;
      counted.added := false;
      return counted;
    end if;
    -- Forgotten since the plain read: added anew.
  end loop;
end;
$$;

-- Forgets the sources that follow `after` in key order, at most `batch`, whose buckets are all
-- empty at `at` (such a state says no more than none): rows picked at random, as keys are hashes,
-- and locked only if no other request holds them. One plan for all: no statistics make it a scan.
create function private.forget_empty_sources(after bytea, batch integer, at float8)
returns void language plpgsql set search_path = '' set plan_cache_mode = force_generic_plan as $$
begin
  delete from private.sign_up_sources
   where source_key = any (array(
     select source.source_key from private.sign_up_sources source
      where source.source_key = any (array(
              select following.source_key from private.sign_up_sources following
               where following.source_key > after order by following.source_key limit batch))
        and not pg_catalog.jsonb_path_exists(source.empty_at, '$.* ? (@ >= $at)', pg_catalog.jsonb_build_object('at', at))
        for update of source skip locked));
end;
$$;

-- The trigger -----------------------------------------------------------------------------------

-- One sign-up per request: a visitor's request of several rows is refused at its second row,
-- before that row is checked or takes any lock. Its first row has been charged, and stored or
-- held back as a duplicate (below); either way the request answers the same, so several rows
-- learn no more than one. Fires first of the triggers.
create function private.one_sign_up_per_request()
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

create trigger early_access_0_one_row
  before insert on public.early_access
  for each row execute function private.one_sign_up_per_request();

-- Admits a visitor's sign-up: charges the request's attempt, if the gate has not (refused past a
-- ceiling), then, for a new address, counts it in its paces and marks it past one. Fires after
-- early_access_1_check: a sign-up the checks refuse is charged by the gate alone. One plan for
-- all (force_generic_plan), not one per client.
create function private.admit_sign_up()
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

create trigger early_access_2_admit
  before insert on public.early_access
  for each row execute function private.admit_sign_up();

-- Answers a request whose sign-up was held back as a duplicate as the unique constraint would
-- have, once all its rows are seen (a second row is refused before): with no detail, as
-- PostgreSQL gives none of a table with row level security. The attempt was charged already.
create function private.refuse_duplicate()
returns trigger language plpgsql security definer set search_path = '' as $$
begin
  raise exception using
    errcode = 'unique_violation',
    message = 'duplicate key value violates unique constraint "early_access_email_key"',
    schema = 'public', table = 'early_access', constraint = 'early_access_email_key';
end;
$$;

create trigger early_access_4_duplicate
  after insert on public.early_access
  for each statement when (current_setting('early_access.duplicate', true) <> '') execute function private.refuse_duplicate();

-- Nobody but the owner reaches the helpers: not the API roles, and not PUBLIC, which may
-- execute every new function by default.
revoke all on table private.client_key_secret, private.sign_up_sources, private.sign_up_ceilings
  from public, anon, authenticated, service_role;
revoke all on type private.sign_up_source from public, anon, authenticated, service_role;
revoke all on function private.check_sign_up(), private.admit_sign_up(), private.one_sign_up_per_request(),
  private.refuse_duplicate(), private.refuse(integer, text, integer), private.ceiling_cell(text, integer, integer),
  private.ceiling_columns(bytea, integer, integer), private.ceiling_changes(), private.make_ceiling_cells(),
  private.ceilings_keep_their_cells(), private.charge_request(), private.sign_up_clock(), private.client_address(),
  private.client_in_scope(text, integer, integer), private.clients_of(text), private.sources_of(text),
  private.with_sign_up(private.sign_up_source, float8), private.paces_past(private.sign_up_source, float8),
  private.count_in_source(private.sign_up_source, float8), private.forget_empty_sources(bytea, integer, float8)
  from public, anon, authenticated, service_role;
