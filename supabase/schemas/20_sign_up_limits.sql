-- How fast sign-ups may come. No real person is refused because others share their address
-- (offices, campuses, conference Wi-Fi, carrier NAT): past a source's normal pace a sign-up is
-- stored and marked for the owner's review (30_marks.sql); only a flood far beyond any crowd is
-- refused, with 429. Supabase does not rate-limit its REST API, so the database does.

-- The key of the sources' hashes: random, made once per database, never leaves it.
create table private.client_key_secret (
  only_row boolean primary key default true check (only_row),
  secret bytea not null
);
insert into private.client_key_secret (secret)
select decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');

-- What "one client" is, per scope: an address (an IPv4 address, or an IPv6 /56, what an ISP
-- hands one customer), or its network (an IPv4 /24, an IPv6 /48).
create table private.sign_up_scopes (
  name text primary key check (name in ('address', 'network')),
  ipv4_prefix integer not null check (ipv4_prefix between 0 and 32),
  ipv6_prefix integer not null check (ipv6_prefix between 0 and 128)
);
comment on table private.sign_up_scopes is 'What one client is, per scope of the sign-up limits.';
insert into private.sign_up_scopes (name, ipv4_prefix, ipv6_prefix) values
  ('address', 32, 56),
  ('network', 24, 48);

-- Each limit holds over ANY window of its length, not calendar windows: never more than N
-- sign-ups in any W, whenever they start.
create table private.sign_up_limits (
  name text not null,
  window_length interval not null check (window_length > interval '0'),
  max_sign_ups integer not null check (max_sign_ups > 0),
  per text not null references private.sign_up_scopes (name),
  kind text not null check (kind in ('pace', 'ceiling')),
  primary key (kind, name)
);
comment on table private.sign_up_limits is
  'Sign-ups per client and window. Past a pace, a sign-up is stored and marked for review; past a ceiling, it is refused (429).';

-- Paces, as a crowd of people rarely passes them and a script does at once.
insert into private.sign_up_limits (kind, name, per, window_length, max_sign_ups) values
  ('pace', 'per address per minute', 'address', interval '1 minute', 10),
  ('pace', 'per address per day', 'address', interval '1 day', 100),
  ('pace', 'per network per hour', 'network', interval '1 hour', 200);

-- Ceilings, far above any crowd:
--   - per address per hour, 1,000: a keynote's whole audience scanning the same QR code behind
--     one address; a script from one address stores at most this, and all past the pace marked;
--   - per address per day, 3,000: three such crowds at one venue in a day;
--   - per network per hour, 2,000, and per day, 10,000: a campus or a carrier's NAT pool is
--     many addresses of one network; 250 people from 250 addresses of one /24 within an hour
--     are all stored, while a script rotating through a /24's 256 addresses (each under its own
--     ceiling) still stops at these.
insert into private.sign_up_limits (kind, name, per, window_length, max_sign_ups) values
  ('ceiling', 'per address per hour', 'address', interval '1 hour', 1000),
  ('ceiling', 'per address per day', 'address', interval '1 day', 3000),
  ('ceiling', 'per network per hour', 'network', interval '1 hour', 2000),
  ('ceiling', 'per network per day', 'network', interval '1 day', 10000);

-- One log per source (a client in one scope, as a keyed hash, never its address): the instants
-- of its latest sign-ups, newest first, as many as the largest limit needs and none older than
-- the longest window. Every pace and ceiling is read off the same log: of any window's sign-ups,
-- exactly the first N are within a limit of N. A source can go once its newest sign-up has left
-- the longest window.
-- Unlogged: the log is no record, only a pace; a crash empties it (forgetting at most a day of
-- pace), and sign-ups write no WAL for it. No index but its key: every index is written on
-- every sign-up.
create unlogged table private.sign_up_sources (
  source_key bytea primary key,
  recent timestamptz[] not null
);
comment on table private.sign_up_sources is
  'The latest sign-ups per source, keyed by a keyed hash of the client: never its address.';

-- A source's log with one more sign-up (now), newest first, keeping what the limits need: the
-- largest limit's count plus one, within the longest window. Sorted, not just prepended: a
-- transaction that started earlier (an earlier now()) may commit later. Only a source seen before
-- pays for it, and for reading the limits.
create function private.latest_sign_ups(log timestamptz[])
returns timestamptz[]
language sql
stable
set search_path = ''
as $$
  select array(
    select instant from pg_catalog.unnest(log || now()) as instant
     where instant >= now() - (select coalesce(max(l.window_length), interval '0') from private.sign_up_limits l)
     order by instant desc
     limit (select max(l.max_sign_ups) + 1 from private.sign_up_limits l))
$$;

-- Admits a visitor's sign-up, or refuses it past a ceiling, and marks it past a pace. It runs
-- on every sign-up, so a new source (most visitors on launch day) costs two keyed hashes and two
-- log rows, and nothing more: no limit is read for a log of one sign-up, which passes none.
-- Planned once for all (force_generic_plan): a plan made for one client's values would be made
-- again for every sign-up.
create function private.admit_sign_up()
returns trigger
language plpgsql
security definer
set search_path = ''
set plan_cache_mode = force_generic_plan
as $$
declare
  -- The client as the edge saw it: Cloudflare's cf-connecting-ip on Supabase, else the
  -- right-most x-forwarded-for entry, the one the last proxy added (the left-most is whatever
  -- the client wrote).
  headers json := nullif(current_setting('request.headers', true), '')::json;
  address text := coalesce(
    nullif(btrim(headers ->> 'cf-connecting-ip'), ''),
    nullif(btrim(split_part(headers ->> 'x-forwarded-for', ',', -1)), '')
  );
  ip inet;
  address_key bytea;
  network_key bytea;
  address_log timestamptz[];
  network_log timestamptz[];
  added_a_source boolean;
  passed record;
  reasons text[];
begin
  -- The role the request runs as; inside this function current_user is its owner.
  if current_setting('role') not in ('anon', 'authenticated') then
    return new;
  end if;

  if current_setting('early_access.admitted_sign_up', true) <> '' then
    raise exception 'Only one sign-up per request'
      using hint = 'Send one row at a time.';
  end if;

  if address is null then
    raise sqlstate 'PGRST' using
      message = json_build_object(
        'code', 'PT400',
        'message', 'The client''s address is unknown',
        'details', 'Sign-ups are counted per address; a request must come through the API gateway.',
        'hint', null
      )::text,
      detail = json_build_object('status', 400, 'headers', json_build_object())::text;
  end if;

  -- Something that is no address (a proxy's mistake; an edge always sends one) counts as itself.
  -- An IPv4 client seen through an IPv6 socket is that IPv4 client.
  ip := case
    when address !~ '^[0-9a-fA-F:.]+$' then null
    when address::inet << inet '::ffff:0.0.0.0/96' then inet '0.0.0.0' + (address::inet - inet '::ffff:0.0.0.0')
    else address::inet
  end;

  -- Each source is a keyed hash of the scope's name and the client in it (`network:192.0.2.0`),
  -- so that no two scopes share one.
  select pg_catalog.sha256(k.secret || convert_to('address:' || coalesce(
           host(network(set_masklen(ip, case family(ip) when 4 then a.ipv4_prefix else a.ipv6_prefix end))), address), 'UTF8')),
         pg_catalog.sha256(k.secret || convert_to('network:' || coalesce(
           host(network(set_masklen(ip, case family(ip) when 4 then n.ipv4_prefix else n.ipv6_prefix end))), address), 'UTF8'))
    into address_key, network_key
    from private.client_key_secret k, private.sign_up_scopes a, private.sign_up_scopes n
   where a.name = 'address' and n.name = 'network';

  -- Atomic: concurrent requests of one source queue on its row, each seeing the log the previous
  -- one committed; a request that fails later rolls its entry back, so only stored sign-ups
  -- count. Every request locks its address before its network.
  insert into private.sign_up_sources as source (source_key, recent)
  values (address_key, array[now()])
  on conflict (source_key) do update set recent = private.latest_sign_ups(source.recent)
  returning source.recent, source.xmax = 0 into address_log, added_a_source;
  insert into private.sign_up_sources as source (source_key, recent)
  values (network_key, array[now()])
  on conflict (source_key) do update set recent = private.latest_sign_ups(source.recent)
  returning source.recent, added_a_source or source.xmax = 0 into network_log, added_a_source;

  -- A limit of N is passed when the log's (N + 1)th newest sign-up, this one counted, is still
  -- within the window: of any window's sign-ups, exactly the first N are within it. Every limit
  -- allows at least one sign-up, so a log of one passes none. Ceilings come first, and refuse.
  if cardinality(address_log) > 1 or cardinality(network_log) > 1 then
    for passed in
      select l.kind, l.name, l.max_sign_ups, l.window_length, log[l.max_sign_ups + 1] as oldest_in_the_way,
             (select count(*) from pg_catalog.unnest(log) as instant
               where instant > now() - l.window_length) as sign_ups
        from private.sign_up_limits l,
             lateral (select case l.per when 'address' then address_log else network_log end) as source (log)
       where log[l.max_sign_ups + 1] > now() - l.window_length
       order by l.kind, l.per, l.window_length
    loop
      if passed.kind = 'ceiling' then
        -- PostgREST's convention for choosing the HTTP answer: 429, with Retry-After the wait
        -- until the oldest sign-up that keeps this one out has left the window.
        raise sqlstate 'PGRST' using
          message = json_build_object(
            'code', 'PT429',
            'message', 'Too many sign-ups from this address',
            'details', format('At most %s sign-ups %s.', passed.max_sign_ups, passed.name),
            'hint', 'Try again later.'
          )::text,
          detail = json_build_object(
            'status', 429,
            'headers', json_build_object('Retry-After', greatest(1, ceil(extract(epoch from
              passed.oldest_in_the_way + passed.window_length - now())))::integer::text)
          )::text;
      end if;
      reasons := reasons || format('%s sign-ups %s (pace: %s)', passed.sign_ups, passed.name, passed.max_sign_ups);
    end loop;

    if reasons is not null then
      -- The source's short keyed id: the first bytes of the address's keyed hash.
      insert into public.early_access_marks (sign_up_id, source, reason)
      values (new.id, encode(substring(address_key from 1 for 6), 'hex'), array_to_string(reasons, '; '));
    end if;
  end if;

  -- One sign-up in eight that added a source (picked by its address's hash, so at random)
  -- prunes the 32 rows that follow its address in key order, if their newest sign-up has left
  -- the longest window. Keys are hashes, so these too are rows picked at random: sign-ups add at
  -- most two rows each and look at four on average, so a backlog drains; none pays for more
  -- than 32, and no statistics can turn it into a scan of the table. Only expired rows are
  -- locked, and none another request holds: two sign-ups never wait for each other here.
  if added_a_source and get_byte(address_key, 0) < 32 then
    delete from private.sign_up_sources
     where source_key in (
       select source.source_key from private.sign_up_sources source
        where source.source_key = any (array(
                select following.source_key from private.sign_up_sources following
                 where following.source_key > address_key
                 order by following.source_key
                 limit 32))
          and source.recent[1] < now() - (select coalesce(max(l.window_length), interval '0') from private.sign_up_limits l)
          for update of source skip locked
     );
  end if;

  perform set_config('early_access.admitted_sign_up', new.id::text, true);
  return new;
end;
$$;

create trigger admit_sign_up
  before insert on public.early_access
  for each row execute function private.admit_sign_up();

-- Nobody but the owner reaches the helpers: not the API roles, and not PUBLIC, which may
-- execute every new function by default.
revoke all on table private.client_key_secret, private.sign_up_scopes, private.sign_up_limits,
  private.sign_up_sources from public, anon, authenticated, service_role;
revoke all on function private.normalize_early_access(), private.admit_sign_up(), private.latest_sign_ups(timestamptz[])
  from public, anon, authenticated, service_role;
