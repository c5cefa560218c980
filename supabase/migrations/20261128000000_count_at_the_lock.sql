-- The sign-up rules, cheaper and exact under concurrency:
--   - the helpers the rules call per sign-up are PL/pgSQL, whose plans last the session:
--     PostgreSQL 17 plans an SQL function's body again in every statement that calls it;
--   - a sign-up's ceilings and paces are judged at the instant it holds its sources' locks, not
--     at its transaction's start, so one that waited behind a later one no longer looks as if it
--     came first (its bucket fuller by the difference: the tenth of ten at once could be marked);
--   - forgetting empty sources tests each state with one JSON path, not a subquery.
-- `npm run bench:rules` and `npm run bench:flood` have the figures.

-- A state after one more sign-up at `at`: each bucket's arrival moved up to `at` if it lies before
-- (the bucket has drained), then on by the limit's interval (`fresh`: each at + interval). PL/pgSQL,
-- as each helper here: its plans last the session; PostgreSQL 17 plans an SQL function per statement.
create or replace function private.arrivals_after(arrivals jsonb, fresh jsonb, at float8)
returns jsonb language plpgsql immutable set search_path = '' as $$
begin
  return (select coalesce(pg_catalog.jsonb_object_agg(f.key, greatest((arrivals ->> f.key)::float8, at) + f.value::float8 - at), '{}')
            from pg_catalog.jsonb_each_text(fresh) as f);
end;
$$;

-- The limits a sign-up passes, given its sources' states with it counted, at the instant `at`:
-- those whose bucket holds more than max_sign_ups (a millisecond's slack for rounding), with about
-- how many it holds and the seconds until one more fits: a pure function of state and instant.
create or replace function private.limits_passed(address_arrivals jsonb, network_arrivals jsonb, at float8)
returns table (kind text, name text, max_sign_ups integer, sign_ups integer, retry_after integer)
language plpgsql stable set search_path = '' as $$
begin
  return query select l.kind, l.name, l.max_sign_ups, round((b.arrival - at) / b.seconds * l.max_sign_ups)::integer,
         greatest(1, ceil(b.arrival - at - b.seconds))::integer
    from private.sign_up_limits l
   cross join lateral (select extract(epoch from l.window_length)::float8 as seconds,
                              (case l.per when 'address' then address_arrivals else network_arrivals end
                                 ->> (l.kind || ' ' || l.name))::float8 as arrival) b
   where b.arrival - at > b.seconds + 0.001
   order by l.kind, l.per, l.window_length;
end;
$$;

-- Counts a sign-up at `at` in a source (a new one starts from `fresh`) under its row's lock, so
-- concurrent requests of one source take turns, judged at the instant it holds the lock (not as if
-- it came before one it waited behind); past a ceiling, writes nothing (the row is only locked) and
-- refuses it, or counts it again if its bucket drained in the microseconds since. Returns the state
-- with it and whether the source is new (nulls for a scope without limits); its keys name its scope.
create or replace function private.count_in_source(key bytea, fresh jsonb, at float8, out arrivals jsonb, out added boolean)
language plpgsql set search_path = '' set plan_cache_mode = force_generic_plan as $$
begin
  if fresh = '{}' then return; end if;
  loop
    insert into private.sign_up_sources as s (source_key, arrivals) values (key, fresh)
    on conflict (source_key) do update set arrivals = private.arrivals_after(s.arrivals, excluded.arrivals, at)
     where not exists (select from (select private.arrivals_after(s.arrivals, excluded.arrivals, at) as a) next,
                         private.limits_passed(next.a, next.a, extract(epoch from pg_catalog.clock_timestamp())) p where p.kind = 'ceiling')
    returning s.arrivals, s.xmax = 0 into arrivals, added;
    exit when found;
    perform private.refuse_past_ceiling(next.a, next.a, extract(epoch from pg_catalog.clock_timestamp()))
       from (select private.arrivals_after(s.arrivals, fresh, at) as a from private.sign_up_sources s where s.source_key = key) next;
  end loop;
end;
$$;

-- Forgets the sources that follow `after` in key order, at most 32, whose buckets are all empty
-- at `at` (such a state says no more than none): rows picked at random, as keys are hashes, and
-- locked only if no other request holds them. One plan for all: no statistics make it a scan.
create or replace function private.forget_empty_sources(after bytea, at float8)
returns void language plpgsql set search_path = '' set plan_cache_mode = force_generic_plan as $$
begin
  delete from private.sign_up_sources
   where source_key = any (array(
     select source.source_key from private.sign_up_sources source
      where source.source_key = any (array(
              select following.source_key from private.sign_up_sources following
               where following.source_key > after order by following.source_key limit 32))
        and not pg_catalog.jsonb_path_exists(source.arrivals, '$.* ? (@ >= $at)', pg_catalog.jsonb_build_object('at', at))
        for update of source skip locked));
end;
$$;

-- Admits a visitor's sign-up: refuses it past a ceiling, counts it, marks it past a pace. Fires
-- after early_access_1_check, so a sign-up the checks refuse is never counted. A refusal is
-- decided on a plain read of its two sources, before any write or lock; if a sign-up fails
-- later, its counts roll back. One plan for all (force_generic_plan), not one per client.
create or replace function private.admit_sign_up()
returns trigger language plpgsql security definer
set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  at float8 := extract(epoch from pg_catalog.clock_timestamp());
  -- The client as the edge saw it: Cloudflare's cf-connecting-ip on Supabase, else the
  -- right-most x-forwarded-for entry, which the last proxy added (the client wrote the rest).
  headers json := nullif(current_setting('request.headers', true), '')::json;
  address text := coalesce(nullif(btrim(headers ->> 'cf-connecting-ip'), ''),
                           nullif(btrim(split_part(headers ->> 'x-forwarded-for', ',', -1)), ''));
  ip inet;
  source record; address_count record; network_count record;
begin
  -- The role the request runs as (current_user is this function's owner). A missing email
  -- counts for nothing: the NOT NULL constraint refuses it next.
  if current_setting('role') not in ('anon', 'authenticated') or new.email is null then
    perform set_config('early_access.admitted_sign_up', new.id::text, true);
    return new;
  end if;
  if current_setting('early_access.admitted_sign_up', true) <> '' then
    raise exception 'Only one sign-up per request' using hint = 'Send one row at a time.';
  end if;
  if address is null then
    raise sqlstate 'PGRST' using
      message = json_build_object('code', 'PT400', 'message', 'The client''s address is unknown', 'hint', null,
        'details', 'Sign-ups are counted per address; a request must come through the API gateway.')::text,
      detail = json_build_object('status', 400, 'headers', json_build_object())::text;
  end if;

  -- What is no address (`cafe`, `1.2.3`) counts as itself; an IPv4 client seen through an IPv6
  -- socket is that IPv4 client.
  if pg_catalog.pg_input_is_valid(address, 'inet') then
    ip := address::inet;
    if ip << inet '::ffff:0.0.0.0/96' then ip := inet '0.0.0.0' + (ip - inet '::ffff:0.0.0.0'); end if;
  end if;

  -- Each source is a keyed hash of the scope's name, the client in it and the shard it is counted
  -- in, at random (`network:192.0.2.0#3`; none for one shard), so no two scopes share one; with
  -- what each holds (a plain read) and each scope's fresh state, in one pass over the scopes.
  select k.address_key, k.network_key,
         (select s.arrivals from private.sign_up_sources s where s.source_key = k.address_key) as address_arrivals,
         (select s.arrivals from private.sign_up_sources s where s.source_key = k.network_key) as network_arrivals,
         coalesce(k.address_fresh, '{}') as address_fresh, coalesce(k.network_fresh, '{}') as network_fresh
    into source
    from (select (array_agg(scope.key) filter (where scope.name = 'address'))[1] as address_key,
                 (array_agg(scope.key) filter (where scope.name = 'network'))[1] as network_key,
                 (array_agg(scope.fresh) filter (where scope.name = 'address'))[1] as address_fresh,
                 (array_agg(scope.fresh) filter (where scope.name = 'network'))[1] as network_fresh
            from (select s.name, pg_catalog.sha256(c.secret || convert_to(s.name || ':' || coalesce(
                           host(network(set_masklen(ip, case family(ip) when 4 then s.ipv4_prefix else s.ipv6_prefix end))), address)
                           || case when s.shards > 1 then '#' || floor(pg_catalog.random() * s.shards)::integer else '' end, 'UTF8')) as key,
                         (select pg_catalog.jsonb_object_agg(l.kind || ' ' || l.name, at + extract(epoch from l.window_length)::float8 * s.shards / l.max_sign_ups)
                            from private.sign_up_limits l where l.per = s.name) as fresh
                    from private.client_key_secret c, private.sign_up_scopes s) scope) k;

  -- A source never seen passes no limit: each allows at least one.
  if source.address_arrivals is not null or source.network_arrivals is not null then
    perform private.refuse_past_ceiling(private.arrivals_after(source.address_arrivals, source.address_fresh, at),
                                        private.arrivals_after(source.network_arrivals, source.network_fresh, at), at);
  end if;
  -- Requests that passed the plain read together take turns here; the one past a ceiling is
  -- refused with nothing written (a network's refusal rolls its address's count back).
  select * into address_count from private.count_in_source(source.address_key, source.address_fresh, at);
  select * into network_count from private.count_in_source(source.network_key, source.network_fresh, at);
  if not (address_count.added and network_count.added) then
    perform private.mark_past_pace(new.id, source.address_key, address_count.arrivals, network_count.arrivals,
                                   extract(epoch from pg_catalog.clock_timestamp())); -- 30_marks.sql; judged now
  end if;
  -- One sign-up in eight that adds a source (by its address's hash, so at random) forgets up to
  -- 32: sign-ups add at most two rows each and look at four on average, so a backlog drains.
  if (address_count.added or network_count.added) and get_byte(source.address_key, 0) < 32 then
    perform private.forget_empty_sources(source.address_key, at);
  end if;

  perform set_config('early_access.admitted_sign_up', new.id::text, true);
  return new;
end;
$$;
