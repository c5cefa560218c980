-- The sign-up rules: how the limits of 20_sign_up_limits.sql are kept. Supabase does not
-- rate-limit its REST API, so the database does.
--
-- The trigger at the end, private.admit_sign_up, reads top to bottom as the steps below: the
-- instant, the client, its two sources, the refusal on a plain read, a duplicate held back, the
-- count under each source's lock, the mark, the forgetting. Requests that fail once the rules
-- have looked at them are counted apart ("Failed requests").

-- The key of the sources' hashes: random, made once per database, never leaves it.
create table private.client_key_secret (only_row boolean primary key default true check (only_row), secret bytea not null);
insert into private.client_key_secret (secret)
select decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');

-- State ---------------------------------------------------------------------------------------

-- Each source's state (a client in one scope, as a keyed hash, never its address): per limit of
-- its scope, keyed `kind name`, the instant its bucket is empty again ("theoretical arrival
-- time"), in seconds since 1970: a few values, whatever the limits' sizes. Seconds, not
-- timestamps and intervals, whose sums follow the request's time zone (`Prefer: timezone`).
-- Unlogged: a crash empties it, forgetting at most a day of pace; no WAL for it.
create unlogged table private.sign_up_sources (source_key bytea primary key, empty_at jsonb not null);
comment on table private.sign_up_sources is 'Per source (a keyed hash of the client, never its address), when each limit''s bucket is empty again.';

-- One source of a sign-up, as the steps below pass it on: its scope, its key, the seconds one
-- sign-up adds to each bucket of its scope's limits, its state (null for a source never seen),
-- and whether this sign-up added it (its first). A state always travels with its scope, so no
-- step can read one scope's state with the other's limits.
create type private.sign_up_source as (scope text, source_key bytea, seconds_per_sign_up jsonb, empty_at jsonb, added boolean);

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

-- The sources a sign-up from `client` counts in, one per scope with limits (else null), with
-- what each holds now (a plain read: no lock). A source's key is a keyed hash of the scope's
-- name, the client in it and, for a scope of several shards, the shard this sign-up counts in,
-- at random (`network:192.0.2.0#3`), so no two scopes or shards share one. A sign-up in a shard
-- counts `shards` times in that shard's buckets, each of which holds its share of the limit.
create function private.sources_of(client text, out address private.sign_up_source, out network private.sign_up_source)
language plpgsql volatile set search_path = '' as $$
declare
  source private.sign_up_source;
begin
  for source in
    select s.name, k.source_key, limits.seconds_per_sign_up,
           (select stored.empty_at from private.sign_up_sources stored where stored.source_key = k.source_key), null
      from private.sign_up_scopes s, private.client_key_secret c,
           lateral (select pg_catalog.jsonb_object_agg(l.kind || ' ' || l.name, extract(epoch from l.window_length)::float8 * s.shards / l.max_sign_ups)
                             as seconds_per_sign_up
                      from private.sign_up_limits l where l.per = s.name) limits,
           lateral (select pg_catalog.sha256(c.secret || convert_to(s.name || ':' || private.client_in_scope(client, s.ipv4_prefix, s.ipv6_prefix)
                      || case when s.shards > 1 then '#' || floor(pg_catalog.random() * s.shards)::integer else '' end, 'UTF8')) as source_key) k
     where limits.seconds_per_sign_up is not null
  loop
    if source.scope = 'address' then address := source; else network := source; end if;
  end loop;
end;
$$;

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

-- The limits of its scope a source is over at `at`: those whose bucket holds more than
-- max_sign_ups (a millisecond's slack for rounding), with about how many it holds (a shard's
-- count times the shards: an estimate of the whole) and the seconds until one more fits. A pure
-- function of the source's state and the instant.
create function private.limits_over(source private.sign_up_source, at float8)
returns table (kind text, name text, max_sign_ups integer, sign_ups integer, retry_after integer)
language plpgsql stable set search_path = '' as $$
begin
  return query select l.kind, l.name, l.max_sign_ups, round((b.empty_at - at) / b.window_seconds * l.max_sign_ups)::integer,
         greatest(1, ceil(b.empty_at - at - b.window_seconds))::integer
    from private.sign_up_limits l
   cross join lateral (select extract(epoch from l.window_length)::float8 as window_seconds,
                              (source.empty_at ->> (l.kind || ' ' || l.name))::float8 as empty_at) b
   where l.per = source.scope and b.empty_at - at > b.window_seconds + 0.001
   order by l.kind, l.window_length;
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

-- Refuses a sign-up whose sources, with it, are over a ceiling at `at`, naming the ceiling
-- furthest over.
create function private.refuse_past_ceiling(address private.sign_up_source, network private.sign_up_source, at float8)
returns void language plpgsql stable set search_path = '' as $$
declare
  over record;
begin
  select * into over
    from (select * from private.limits_over(address, at) union all select * from private.limits_over(network, at)) o
   where o.kind = 'ceiling' order by o.retry_after desc limit 1;
  if found then perform private.refuse(over.max_sign_ups, over.name, over.retry_after); end if;
end;
$$;

-- Counts a sign-up at `at` in its source under the source's row lock, so that concurrent
-- sign-ups of one source take turns, and judges it at the instant it holds the lock. One that
-- passed the plain read together with others and finds a ceiling reached under the lock is
-- refused there, with nothing written (the row is only locked). Returns the source with the
-- sign-up counted, and whether it added the source.
create function private.count_in_source(source private.sign_up_source, at float8)
returns private.sign_up_source language plpgsql set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  counted private.sign_up_source;
begin
  if source is null then return null; end if;
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
      perform private.refuse_past_ceiling(counted, null, private.sign_up_clock());
      update private.sign_up_sources s set empty_at = counted.empty_at where s.source_key = counted.source_key;
      counted.added := false;
      return counted;
    end if;
    -- Forgotten since the plain read: added anew.
  end loop;
end;
$$;

-- Forgets the sources that follow `after` in key order, at most 32, whose buckets are all empty
-- at `at` (such a state says no more than none): rows picked at random, as keys are hashes, and
-- locked only if no other request holds them. One plan for all: no statistics make it a scan.
create function private.forget_empty_sources(after bytea, at float8)
returns void language plpgsql set search_path = '' set plan_cache_mode = force_generic_plan as $$
begin
  delete from private.sign_up_sources
   where source_key = any (array(
     select source.source_key from private.sign_up_sources source
      where source.source_key = any (array(
              select following.source_key from private.sign_up_sources following
               where following.source_key > after order by following.source_key limit 32))
        and not pg_catalog.jsonb_path_exists(source.empty_at, '$.* ? (@ >= $at)', pg_catalog.jsonb_build_object('at', at))
        for update of source skip locked));
end;
$$;

-- Failed requests ---------------------------------------------------------------------------
-- A request that fails once the rules have looked at it (a duplicate, a second row) rolls back
-- everything it wrote, its counts included: asking whether an address is on the list would cost
-- nothing. So such requests are counted where no rollback reaches: in sequences, whose setval
-- outlives the transaction. (A decision before the unique check alone would still be rolled
-- back with the request.) One sequence per value of a source's second key byte, 256 in all, each
-- a leaky bucket of the address's ceiling with the shortest window, holding when it is empty
-- again in milliseconds since 1970. Sources sharing one share its bucket: while a script's probes
-- fill one, a failing request of another source in it meets 429 instead of its own error. A
-- sign-up never reads these buckets (reading one costs a sign-up more than all its other rules'
-- reads together), so no sign-up is ever refused for anyone's probes, and a person who meets
-- "already registered" once has spent one of a ceiling's worth.
do $$
begin
  for slot in 0..255 loop
    execute format('create sequence private.failed_requests_%s as bigint minvalue 0', slot);
    execute format('revoke all on sequence private.failed_requests_%s from public, anon, authenticated, service_role', slot);
  end loop;
end;
$$;

-- Counts a failing request from `address` at `at` in its sequence, or refuses it with 429 past
-- the bucket, with nothing counted. Requests of one sequence take turns under an advisory lock
-- (held until their transaction ends), so that none is lost between the read and the setval.
create function private.count_failed_request(address private.sign_up_source, at float8)
returns void language plpgsql set search_path = '' as $$
declare
  slot regclass;
  ceiling record;
  empty_at float8;
begin
  select l.name, l.max_sign_ups, extract(epoch from l.window_length)::float8 as window_seconds into ceiling
    from private.sign_up_limits l where l.kind = 'ceiling' and l.per = 'address' order by l.window_length limit 1;
  if not found or address is null then return; end if;
  slot := format('private.failed_requests_%s', get_byte(address.source_key, 1))::regclass;
  perform pg_catalog.pg_advisory_xact_lock(slot::oid::integer, 0);
  empty_at := greatest(coalesce(pg_catalog.pg_sequence_last_value(slot), 0) / 1000.0, at)
              + ceiling.window_seconds / ceiling.max_sign_ups;
  if empty_at - at > ceiling.window_seconds + 0.001 then
    perform private.refuse(ceiling.max_sign_ups, ceiling.name, greatest(1, ceil(empty_at - at - ceiling.window_seconds))::integer);
  end if;
  perform pg_catalog.setval(slot, (empty_at * 1000)::bigint);
end;
$$;

-- The trigger -----------------------------------------------------------------------------------

-- One sign-up per request: a visitor's request of several rows is refused at its second row,
-- before that row is checked, and counted as a failed request. Its first row may have been
-- stored or held back as a duplicate (below); either way the request answers the same, so
-- several rows learn no more than one. Fires first of the triggers.
create function private.one_sign_up_per_request()
returns trigger language plpgsql security definer set search_path = '' as $$
begin
  if current_setting('role') in ('anon', 'authenticated') then
    if current_setting('early_access.sign_up_row', true) <> '' then
      perform private.count_failed_request((private.sources_of(private.client_address())).address, private.sign_up_clock());
      raise exception 'Only one sign-up per request' using hint = 'Send one row at a time.';
    end if;
    perform set_config('early_access.sign_up_row', new.id::text, true);
  end if;
  return new;
end;
$$;

create trigger early_access_0_one_row
  before insert on public.early_access
  for each row execute function private.one_sign_up_per_request();

-- Admits a visitor's sign-up: refuses it past a ceiling, counts it, marks it past a pace. Fires
-- after early_access_1_check, so a sign-up the checks refuse is never counted. If a sign-up
-- fails later, its counts roll back. One plan for all (force_generic_plan), not one per client.
create function private.admit_sign_up()
returns trigger language plpgsql security definer
set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  at float8;
  sources record;
  address private.sign_up_source;
  network private.sign_up_source;
begin
  -- The role the request runs as (current_user is this function's owner). A missing email
  -- counts for nothing: the NOT NULL constraint refuses it next.
  if current_setting('role') not in ('anon', 'authenticated') or new.email is null then
    perform set_config('early_access.admitted_sign_up', new.id::text, true);
    return new;
  end if;
  at := private.sign_up_clock();
  sources := private.sources_of(private.client_address());
  address := sources.address;
  network := sources.network;

  -- A refusal is decided on a plain read, before any write or lock: a flood past its ceiling
  -- costs one read per request. A source never seen is over no limit: each allows one.
  if address.empty_at is not null or network.empty_at is not null then
    perform private.refuse_past_ceiling(private.with_sign_up(address, at), private.with_sign_up(network, at), at);
  end if;
  -- A duplicate (its address is on the list) would fail at the unique constraint, rolling back
  -- all it counted. It is held back from the insert, and its request is counted as a failed one
  -- and answered as the constraint would once its rows are all seen (private.refuse_duplicate).
  -- An upsert that ignores duplicates goes on: with `on_conflict=email` it succeeds with no row
  -- and counts as a sign-up does; without, PostgREST's conflict is on the id, and the email's
  -- constraint fails it. Either way it is counted as a failed request first.
  if exists (select from public.early_access e where e.email = new.email) then
    if coalesce(current_setting('request.headers', true)::json ->> 'prefer', '') !~ 'resolution=ignore-duplicates' then
      perform set_config('early_access.duplicate', 'held back', true);
      return null;
    end if;
    perform private.count_failed_request(address, at);
  end if;
  -- Sign-ups that passed the plain read together take turns here; one past a ceiling is refused
  -- with nothing written (a network's refusal rolls its address's count back).
  address := private.count_in_source(address, at);
  network := private.count_in_source(network, at);
  if not (address.added and network.added) then
    perform private.mark_past_pace(new.id, address, network, private.sign_up_clock()); -- 30_marks.sql
  end if;
  -- One sign-up in eight from a new source (by its address's hash, so at random) forgets up to
  -- 32: sign-ups add at most two rows each and look at four on average, so a backlog drains.
  if (address.added or network.added) and get_byte(address.source_key, 0) < 32 then
    perform private.forget_empty_sources(address.source_key, at);
  end if;

  perform set_config('early_access.admitted_sign_up', new.id::text, true);
  return new;
end;
$$;

create trigger early_access_2_admit
  before insert on public.early_access
  for each row execute function private.admit_sign_up();

-- Counts a request whose sign-up was held back as a duplicate as a failed one, then answers it
-- as the unique constraint would have, once all its rows are seen (a second row is refused, and
-- counted, before; so each request counts once, whatever its first row held): with no detail,
-- as PostgreSQL gives none of a table with row level security.
create function private.refuse_duplicate()
returns trigger language plpgsql security definer set search_path = '' as $$
begin
  perform private.count_failed_request((private.sources_of(private.client_address())).address, private.sign_up_clock());
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
revoke all on table private.client_key_secret, private.sign_up_sources from public, anon, authenticated, service_role;
revoke all on type private.sign_up_source from public, anon, authenticated, service_role;
revoke all on function private.check_sign_up(), private.admit_sign_up(), private.one_sign_up_per_request(),
  private.refuse_duplicate(), private.refuse(integer, text, integer),
  private.count_failed_request(private.sign_up_source, float8), private.sign_up_clock(), private.client_address(),
  private.client_in_scope(text, integer, integer), private.sources_of(text),
  private.with_sign_up(private.sign_up_source, float8), private.limits_over(private.sign_up_source, float8),
  private.refuse_past_ceiling(private.sign_up_source, private.sign_up_source, float8),
  private.count_in_source(private.sign_up_source, float8), private.forget_empty_sources(bytea, float8)
  from public, anon, authenticated, service_role;
