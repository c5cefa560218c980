-- How fast sign-ups may come. No real person is refused because others share their address
-- (offices, campuses, conference Wi-Fi, carrier NAT): past a source's normal pace a sign-up is
-- stored and marked for the owner's review (30_marks.sql); only a flood far beyond any crowd is
-- refused, with 429. Supabase does not rate-limit its REST API, so the database does.

-- The key of the sources' hashes: random, made once per database, never leaves it.
create table private.client_key_secret (only_row boolean primary key default true check (only_row), secret bytea not null);
insert into private.client_key_secret (secret)
select decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');

-- What "one client" is, per scope: an address (an IPv4 address, or an IPv6 /56, what an ISP
-- hands one customer), or its network (an IPv4 /24, an IPv6 /48), counted in `shards` that each
-- hold their share of every limit: a sign-up holds its shard's row lock until its commit is on
-- disk, so a network's sign-ups take turns per shard, not all in one line.
create table private.sign_up_scopes (
  name text primary key check (name in ('address', 'network')),
  ipv4_prefix integer not null check (ipv4_prefix between 0 and 32),
  ipv6_prefix integer not null check (ipv6_prefix between 0 and 128),
  shards integer not null check (shards between 1 and 64)
);
comment on table private.sign_up_scopes is 'What one client is, per scope of the sign-up limits, and in how many shards it is counted.';
insert into private.sign_up_scopes (name, ipv4_prefix, ipv6_prefix, shards) values
  ('address', 32, 56, 1),
  ('network', 24, 48, 16);

-- Each limit is a leaky bucket (GCRA) that holds max_sign_ups and drains that many every
-- window_length: one comes free every window_length / max_sign_ups. A sign-up passes a limit when
-- its bucket, with it, holds more than max_sign_ups. So a limit of N per W admits N at once and N
-- more every W after: at most N + N·t/W in any span t (2N in one W), never N + 1 in one burst.
create table private.sign_up_limits (
  name text not null,
  window_length interval not null check (window_length > interval '0'),
  max_sign_ups integer not null check (max_sign_ups > 0),
  per text not null references private.sign_up_scopes (name),
  kind text not null check (kind in ('pace', 'ceiling')),
  primary key (kind, name)
);
comment on table private.sign_up_limits is
  'Leaky buckets per client: max_sign_ups, draining that many each window_length. Past a pace, a sign-up is stored and marked for review; past a ceiling, it is refused (429).';

-- Paces, as a crowd of people rarely passes them and a script does at once. Ceilings, far above
-- any crowd: per address, 1,000 an hour (a keynote's whole audience behind one address; a flood
-- from one address stores about this many, all past the pace marked) and 3,000 a day (three such
-- crowds); per network (a campus, a carrier's NAT pool: 250 people from 250 addresses of one /24
-- are all stored), 2,000 an hour and 10,000 a day, where a script rotating through a /24's 256
-- addresses, each under its own ceiling, still stops.
insert into private.sign_up_limits (kind, name, per, window_length, max_sign_ups) values
  ('pace', 'per address per minute', 'address', interval '1 minute', 10),
  ('pace', 'per address per day', 'address', interval '1 day', 100),
  ('pace', 'per network per hour', 'network', interval '1 hour', 200),
  ('ceiling', 'per address per hour', 'address', interval '1 hour', 1000),
  ('ceiling', 'per address per day', 'address', interval '1 day', 3000),
  ('ceiling', 'per network per hour', 'network', interval '1 hour', 2000),
  ('ceiling', 'per network per day', 'network', interval '1 day', 10000);

-- Each source's state (a client in one scope, as a keyed hash, never its address): per limit of
-- its scope, named `kind name`, the instant its bucket is empty again ("theoretical arrival
-- time"), in seconds since 1970: a few values, whatever the limits' sizes. Seconds, not
-- timestamps and intervals, whose sums follow the request's time zone (`Prefer: timezone`).
-- Unlogged: a crash empties it, forgetting at most a day of pace; no WAL for it.
create unlogged table private.sign_up_sources (source_key bytea primary key, arrivals jsonb not null);
comment on table private.sign_up_sources is 'Per source (a keyed hash of the client, never its address), when each limit''s bucket is empty again.';

-- A state after one more sign-up at `at`: each bucket's arrival moved up to `at` if it lies before
-- (the bucket has drained), then on by the limit's interval (`fresh`: each at + interval). PL/pgSQL,
-- as each helper here: its plans last the session; PostgreSQL 17 plans an SQL function per statement.
create function private.arrivals_after(arrivals jsonb, fresh jsonb, at float8)
returns jsonb language plpgsql immutable set search_path = '' as $$
begin
  return (select coalesce(pg_catalog.jsonb_object_agg(f.key, greatest((arrivals ->> f.key)::float8, at) + f.value::float8 - at), '{}')
            from pg_catalog.jsonb_each_text(fresh) as f);
end;
$$;

-- The limits a sign-up passes, given its sources' states with it counted, at the instant `at`:
-- those whose bucket holds more than max_sign_ups (a millisecond's slack for rounding), with about
-- how many it holds and the seconds until one more fits: a pure function of state and instant.
create function private.limits_passed(address_arrivals jsonb, network_arrivals jsonb, at float8)
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

-- Refuses a sign-up past a ceiling with 429 (PostgREST's convention for choosing the HTTP
-- answer), with Retry-After the seconds until one more would fit.
create function private.refuse_past_ceiling(address_arrivals jsonb, network_arrivals jsonb, at float8)
returns void language plpgsql stable set search_path = '' as $$
declare
  passed record;
begin
  select * into passed from private.limits_passed(address_arrivals, network_arrivals, at) p
   where p.kind = 'ceiling' order by p.retry_after desc limit 1;
  if found then
    raise sqlstate 'PGRST' using
      message = json_build_object('code', 'PT429', 'message', 'Too many sign-ups from this address',
        'details', format('At most %s sign-ups %s.', passed.max_sign_ups, passed.name), 'hint', 'Try again later.')::text,
      detail = json_build_object('status', 429, 'headers', json_build_object('Retry-After', passed.retry_after::text))::text;
  end if;
end;
$$;

-- Counts a sign-up at `at` in a source (a new one starts from `fresh`) under its row's lock, so
-- concurrent requests of one source take turns, judged at the instant it holds the lock (not as if
-- it came before one it waited behind); past a ceiling, writes nothing (the row is only locked) and
-- refuses it, or counts it again if its bucket drained in the microseconds since. Returns the state
-- with it and whether the source is new (nulls for a scope without limits); its keys name its scope.
create function private.count_in_source(key bytea, fresh jsonb, at float8, out arrivals jsonb, out added boolean)
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
create function private.forget_empty_sources(after bytea, at float8)
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
create function private.admit_sign_up()
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
  -- socket is that IPv4 client. (A block, not pg_input_is_valid, which PostgreSQL 15 lacks; it
  -- costs a sign-up nothing measurable unless the cast fails.)
  begin
    ip := address::inet;
  exception when invalid_text_representation then
    ip := null;
  end;
  if ip << inet '::ffff:0.0.0.0/96' then ip := inet '0.0.0.0' + (ip - inet '::ffff:0.0.0.0'); end if;

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

create trigger early_access_2_admit
  before insert on public.early_access
  for each row execute function private.admit_sign_up();

-- Nobody but the owner reaches the helpers: not the API roles, and not PUBLIC, which may
-- execute every new function by default.
revoke all on table private.client_key_secret, private.sign_up_scopes, private.sign_up_limits,
  private.sign_up_sources from public, anon, authenticated, service_role;
revoke all on function private.check_sign_up(), private.admit_sign_up(), private.arrivals_after(jsonb, jsonb, float8),
  private.limits_passed(jsonb, jsonb, float8), private.refuse_past_ceiling(jsonb, jsonb, float8),
  private.count_in_source(bytea, jsonb, float8), private.forget_empty_sources(bytea, float8)
  from public, anon, authenticated, service_role;
