-- The early-access list, its rules and the owner's marks: the baseline, what supabase/schemas/
-- declared when it was made (read there, file by file, for the reasons). Every later change is a
-- migration of its own, named by the clock when it is made (`npx supabase migration new <name>`),
-- and never edited once it has landed.

-- supabase/schemas/00_private.sql -----------------------------------------------------------------

-- The schema `private`: the helpers of the public tables (the sign-up limits, their sources'
-- states, the key of their hashes, the trigger functions). The REST API exposes `public` only, and no API role may
-- use `private`: not the public key's, not even the secret key's.
create schema private;
comment on schema private is 'Helpers of the public tables; never exposed over the REST API.';
revoke all on schema private from public, anon, authenticated, service_role;

-- supabase/schemas/10_early_access.sql ------------------------------------------------------------

-- The early-access list: one row per address that asked to hear about the launch.
--
-- The page's key is public, so every rule here faces the open internet: anyone may call the REST
-- API with that key directly, and the database alone keeps what the page promises. The limits on
-- how fast sign-ups may come, and the marks for the owner's review, are in the next files.

create table public.early_access (
  id uuid primary key default gen_random_uuid(),
  -- Stored normalised (the trigger below), so that the unique constraint means one row per
  -- address, whatever its case or surrounding spaces.
  email text not null,
  -- Free text, no format check (the form has none); an empty phone is stored as null.
  phone text,
  created_at timestamptz not null default now(),
  -- Checked at once, and never deferred: PostgREST's `on_conflict=email` with `Prefer:
  -- resolution=ignore-duplicates` needs a constraint it may use as an arbiter. A request of
  -- several rows learns no more than one of one row: the sign-up rules refuse its second row.
  constraint early_access_email_key unique (email)
);
comment on table public.early_access is 'People who asked for early access, one row per email address.';

-- What is stored ------------------------------------------------------------------------------

-- Normalises what visitors type, then refuses what the form would not send, before the sign-up
-- rules count anything (BEFORE triggers fire in name order: this one first). Lengths come
-- first, so that no trim or regex ever reads more than a real field holds:
--   - the email: what JavaScript's trim() takes off (every Unicode space), as the form does
--     before sending; then only A to Z lowered: lower() would turn some other letters into ASCII
--     ones (the Kelvin sign into k), and store an address the browser refuses as one it accepts.
--     Then exactly what the form's email field accepts: the browser's type=email grammar (WHATWG
--     "valid e-mail address"), at most 254 characters: no second '@', spaces, control or format
--     characters, or letters beyond ASCII;
--   - the phone: free text, trimmed, empty stored as null, at most 32 characters, with nothing
--     invisible in it: no control (Cc) or format (Cf) characters, line or paragraph separators,
--     blank fillers (Braille, Hangul), private-use characters, noncharacters, and no
--     Default_Ignorable_Code_Point at all (Unicode's DerivedCoreProperties.txt), assigned or not:
--     combining grapheme joiner, variation selectors, Mongolian and Khmer invisibles, tag
--     characters, and the ranges kept for future ones.
-- A refusal is SQLSTATE 23514 (HTTP 400) naming the rule, as a check constraint would.
create function private.check_sign_up()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
declare
  -- What JavaScript's trim() takes off.
  spaces constant text := E'\t\n\u000b\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';
  broken text;
begin
  if char_length(new.email) > 1000 then
    broken := 'early_access_email_check';
  elsif char_length(new.phone) > 1000 then
    broken := 'early_access_phone_check';
  else
    new.email := translate(btrim(new.email, spaces), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
    new.phone := nullif(btrim(new.phone, spaces), '');
    if char_length(new.email) > 254
       or new.email !~ '^[a-z0-9.!#$%&''*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$' then
      broken := 'early_access_email_check';
    elsif char_length(new.phone) > 32
       or new.phone ~ '[\u0001-\u001f\u007f-\u009f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u2800\u3164\ue000-\uf8ff\ufdd0-\ufdef\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\ufffe\uffff\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff\U000f0000-\U0010ffff\U0001fffe-\U0001ffff\U0002fffe-\U0002ffff\U0003fffe-\U0003ffff\U0004fffe-\U0004ffff\U0005fffe-\U0005ffff\U0006fffe-\U0006ffff\U0007fffe-\U0007ffff\U0008fffe-\U0008ffff\U0009fffe-\U0009ffff\U000afffe-\U000affff\U000bfffe-\U000bffff\U000cfffe-\U000cffff\U000dfffe-\U000dffff\U000efffe-\U000effff]' then
      broken := 'early_access_phone_check';
    end if;
  end if;
  if broken is not null then
    raise exception using
      errcode = 'check_violation',
      message = format('new row for relation "early_access" violates check constraint "%s"', broken),
      schema = 'public', table = 'early_access', constraint = broken;
  end if;
  return new;
end;
$$;

create trigger early_access_1_check
  before insert or update on public.early_access
  for each row execute function private.check_sign_up();

-- Who may do what -----------------------------------------------------------------------------

alter table public.early_access enable row level security;

-- A visitor (the publishable key acts as anon) adds one sign-up per request and reads back only
-- that row, never anyone else's: the trigger that admits a sign-up
-- (private.admit_sign_up, in 25_sign_up_rules.sql) marks its transaction with the row's id, in a
-- transaction-local setting that nothing a client sends can set, gone when the request ends.
-- (Compared as a uuid, so that a read-back finds the row by its primary key; read once per
-- statement, `(select …)`, not once per row.)
create policy "Visitors add only the sign-up their request was admitted for"
  on public.early_access for insert
  to anon, authenticated
  with check (id = nullif((select current_setting('early_access.admitted_sign_up', true)), '')::uuid);

create policy "Visitors can read back only the sign-up their own request added"
  on public.early_access for select
  to anon, authenticated
  using (id = nullif((select current_setting('early_access.admitted_sign_up', true)), '')::uuid);

-- Every privilege explicitly: older projects grant everything on new tables to the API roles,
-- newer ones nothing. Visitors insert an email and a phone (the read-back needs SELECT); never
-- update or delete. The secret key (service_role) is the owner's.
revoke all on table public.early_access from anon, authenticated;
grant insert (email, phone) on table public.early_access to anon, authenticated;
grant select on table public.early_access to anon, authenticated;
grant all on table public.early_access to service_role;

-- supabase/schemas/20_sign_up_limits.sql ----------------------------------------------------------

-- The sign-up limits: what one client is, and how many sign-ups it may make. Every number the
-- rules go by stands here, once; the rules themselves are in 25_sign_up_rules.sql. No real
-- person is refused because others share their address (offices, campuses, conference Wi-Fi,
-- carrier NAT): past a pace a sign-up is stored and marked for the owner's review; only past a
-- ceiling, far beyond any crowd, is one refused, with 429. To change a limit on a live project,
-- change it here and in a new migration (the README's "Common changes").

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
-- window_length: one comes free every window_length / max_sign_ups. A sign-up is over a limit
-- when its bucket, with it, holds more than max_sign_ups. So a limit of N per W admits N at once
-- and N more every W after: at most N + N·t/W in any span t (2N in one W), never N + 1 in one
-- burst.
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

-- THE LIMITS. Every number of the rules is here, and only here: documents and tests read them
-- from this table. Paces, as a crowd of people rarely passes them and a script does at once.
-- Ceilings, far above any crowd: per address, an hour's (a keynote's whole audience behind one
-- address; a flood from one address stores about this many, all past the pace marked) and a
-- day's (three such crowds); per network (a campus, a carrier's NAT pool: 250 people from 250
-- addresses of one /24 are all stored), where a script rotating through a /24's 256 addresses,
-- each under its own ceiling, still stops.
insert into private.sign_up_limits (kind, name, per, window_length, max_sign_ups) values
  ('pace', 'per address per minute', 'address', interval '1 minute', 10),
  ('pace', 'per address per day', 'address', interval '1 day', 100),
  ('pace', 'per network per hour', 'network', interval '1 hour', 200),
  ('ceiling', 'per address per hour', 'address', interval '1 hour', 1000),
  ('ceiling', 'per address per day', 'address', interval '1 day', 3000),
  ('ceiling', 'per network per hour', 'network', interval '1 hour', 2000),
  ('ceiling', 'per network per day', 'network', interval '1 day', 10000);

-- Nobody but the owner reaches them: not the API roles, not even the secret key's.
revoke all on table private.sign_up_scopes, private.sign_up_limits from public, anon, authenticated, service_role;

-- supabase/schemas/25_sign_up_rules.sql -----------------------------------------------------------

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

-- supabase/schemas/30_marks.sql -------------------------------------------------------------------

-- Sign-ups past a normal pace, marked for the owner's review (25_sign_up_rules.sql marks them), in a
-- table of their own: the public key cannot read a mark or a source, not even on the read-back
-- of its own row, whose `select=*` is the sign-up's own columns only. Unmarked sign-ups record
-- nothing about their source.

create table public.early_access_marks (
  sign_up_id uuid primary key references public.early_access (id) on delete cascade,
  -- The address's keyed hash, shortened: one id per address, and no address.
  source text not null,
  -- Which pace it passed, and by how much, in words.
  reason text not null
);
comment on table public.early_access_marks is
  'Sign-ups past a normal pace, for the owner to review: their source (a keyed id, never an address) and why.';

alter table public.early_access_marks enable row level security;
-- No API role but the secret key's is granted anything here; should a grant ever slip in (older
-- projects grant every new table to anon by default), visitors still see no mark.
create policy "Visitors never see marks"
  on public.early_access_marks as restrictive for all
  to anon, authenticated
  using (false) with check (false);

-- Judges a sign-up against its sources' paces (private.admit_sign_up calls it, with each source
-- as counted, at the instant it is judged), and holds the mark for private.record_mark: the
-- reasons in words, and the source's short keyed id (the first bytes of its address's keyed
-- hash). In a transaction-local setting, as the admitted sign-up's id is.
create function private.mark_past_pace(sign_up_id uuid, address private.sign_up_source,
                                       network private.sign_up_source, at float8)
returns void language plpgsql set search_path = '' as $$
begin
  perform set_config('early_access.mark', json_build_object('sign_up_id', sign_up_id,
            'source', encode(substring(address.source_key from 1 for 6), 'hex'),
            'reason', string_agg(format('about %s sign-ups %s (pace: %s)', o.sign_ups, o.name, o.max_sign_ups), '; '))::text, true)
     from (select * from private.limits_over(address, at) union all select * from private.limits_over(network, at)) o
    where o.kind = 'pace'
   having count(*) > 0;
end;
$$;

-- Writes the mark private.mark_past_pace held, once the sign-up's row is stored: only a row that
-- was inserted gets one (an upsert that skips a duplicate leaves none behind). Called only when
-- a mark is held.
create function private.record_mark()
returns trigger language plpgsql security definer set search_path = '' as $$
declare
  mark json := nullif(current_setting('early_access.mark', true), '')::json;
begin
  if (mark ->> 'sign_up_id')::uuid = new.id then
    insert into public.early_access_marks (sign_up_id, source, reason) values (new.id, mark ->> 'source', mark ->> 'reason');
  end if;
  return null;
end;
$$;

create trigger early_access_3_mark
  after insert on public.early_access
  for each row when (current_setting('early_access.mark', true) <> '') execute function private.record_mark();

-- Every sign-up with its mark, if any, and its address's domain. Security invoker: read with the
-- reader's own rights. Its mark columns are subqueries, so the view stays updatable: the owner
-- removes a source's marked sign-ups through it (`delete … where source = …`), and a domain's
-- (`delete … where domain = …`, for a domain the owner's command marks: 50_addresses.sql).
create view public.early_access_with_marks with (security_invoker = true) as
select e.id, e.email, e.phone, e.created_at,
       (select m.source from public.early_access_marks m where m.sign_up_id = e.id) as source,
       (select m.reason from public.early_access_marks m where m.sign_up_id = e.id) as review,
       split_part(e.email, '@', 2) as domain
  from public.early_access e;

-- Marked sign-ups by source: enough to tell a crowd of people from a script's junk at a glance.
create view public.early_access_sources with (security_invoker = true) as
select m.source,
       count(*)::integer as sign_ups,
       min(e.created_at) as first_at,
       max(e.created_at) as last_at,
       (array_agg(e.email order by e.created_at, e.id))[1:3] as some_emails
  from public.early_access_marks m
  join public.early_access e on e.id = m.sign_up_id
 group by m.source;

-- The owner's command reads and removes marks with the secret key (service_role); the public
-- roles get nothing.
revoke all on table public.early_access_marks, public.early_access_with_marks, public.early_access_sources
  from anon, authenticated, service_role;
grant select, delete on table public.early_access_marks to service_role;
grant select, delete on table public.early_access_with_marks to service_role;
grant select on table public.early_access_sources to service_role;
revoke all on function private.mark_past_pace(uuid, private.sign_up_source, private.sign_up_source, float8),
  private.record_mark() from public, anon, authenticated, service_role;

-- supabase/schemas/40_sign_ups_by_hour.sql --------------------------------------------------------

-- How the list grows, for the owner's chart (`npm run sign-ups -- count`): sign-ups counted in the
-- database when read, so that the command fetches a few hundred rows however long the list, and a
-- sign-up writes nothing more for them. Only the secret key reads them.

-- What the planner should know of the quarter hours below: how many there are, so that it counts
-- them in a hash table rather than sorting every sign-up. Statistics, not an index: ANALYZE
-- gathers them; a sign-up writes nothing for them.
create statistics public.early_access_quarter_hours
  on (date_bin(interval '15 minutes', created_at, timestamptz '2000-01-01 00:00:00+00'))
  from public.early_access;

-- Sign-ups per UTC hour, and per quarter of it (:00, :15, :30, :45): every time zone's clock is
-- a whole number of quarter hours from UTC (India's UTC+5:30, Nepal's UTC+5:45), so the quarters
-- add up into any zone's local hours and days exactly. Hours without a sign-up have no row.
create view public.early_access_hours with (security_invoker = true) as
select date_bin(interval '1 hour', q.starts_at, timestamptz '2000-01-01 00:00:00+00') as starts_at,
       sum(q.sign_ups)::integer as sign_ups,
       array[
         coalesce(sum(q.sign_ups) filter (where date_part('minute', q.starts_at at time zone 'UTC') = 0), 0),
         coalesce(sum(q.sign_ups) filter (where date_part('minute', q.starts_at at time zone 'UTC') = 15), 0),
         coalesce(sum(q.sign_ups) filter (where date_part('minute', q.starts_at at time zone 'UTC') = 30), 0),
         coalesce(sum(q.sign_ups) filter (where date_part('minute', q.starts_at at time zone 'UTC') = 45), 0)
       ]::integer[] as by_quarter
  from (select date_bin(interval '15 minutes', e.created_at, timestamptz '2000-01-01 00:00:00+00') as starts_at,
               count(*) as sign_ups
          from public.early_access e
         group by 1) q
 group by 1;
comment on view public.early_access_hours is
  'Sign-ups per UTC hour, and per quarter of it (by_quarter: from :00, :15, :30, :45).';

-- The whole list in one row: how many, how many left a phone (those the discount is for), how
-- many are marked for review, and the first and latest sign-up.
create view public.early_access_totals with (security_invoker = true) as
select count(*)::integer as sign_ups,
       count(e.phone)::integer as with_phone,
       (select count(*) from public.early_access_marks)::integer as marked,
       min(e.created_at) as first_at,
       max(e.created_at) as last_at
  from public.early_access e;
comment on view public.early_access_totals is
  'The whole list in one row: sign-ups, with a phone, marked for review, the first and the latest.';

-- The owner's command reads them with the secret key (service_role); the public roles get nothing.
revoke all on table public.early_access_hours, public.early_access_totals
  from anon, authenticated, service_role;
grant select on table public.early_access_hours, public.early_access_totals to service_role;

-- supabase/schemas/50_addresses.sql ---------------------------------------------------------------

-- What the owner's command needs to mark addresses that look undeliverable or doubled: the list
-- grouped by domain and by mailbox, counted by the database when read, so that the command
-- fetches a few rows however long the list, and a sign-up writes nothing for them. Which domains
-- are disposable or mistyped is the command's to say (tools/sign-ups/marks.ts), from lists
-- published on npm: they change with an `npm update`, never with a migration. Only the secret
-- key reads these views.

-- Sign-ups that reach the same mailbox as an earlier one: each later sign-up, with the address of
-- the earliest (which is not listed: it stays clean). Only at providers that deliver variants of
-- an address to one mailbox: Gmail ignores the dots of the name and anything after a `+`, and
-- googlemail.com is gmail.com; Outlook.com (its hotmail and live domains too), iCloud, Fastmail and
-- Proton ignore anything after a `+`. Everywhere else, john.doe@ and johndoe@ may be two people.
create view public.early_access_repeats with (security_invoker = true) as
with providers (domain, mailbox_domain, ignores_dots) as (
  values ('gmail.com', 'gmail.com', true), ('googlemail.com', 'gmail.com', true),
         ('outlook.com', 'outlook.com', false), ('hotmail.com', 'hotmail.com', false),
         ('live.com', 'live.com', false), ('msn.com', 'msn.com', false),
         ('hotmail.co.uk', 'hotmail.co.uk', false), ('hotmail.fr', 'hotmail.fr', false),
         ('outlook.fr', 'outlook.fr', false), ('live.co.uk', 'live.co.uk', false),
         ('icloud.com', 'icloud.com', false), ('me.com', 'me.com', false), ('mac.com', 'mac.com', false),
         ('fastmail.com', 'fastmail.com', false), ('fastmail.fm', 'fastmail.fm', false),
         ('proton.me', 'proton.me', false), ('protonmail.com', 'protonmail.com', false),
         ('protonmail.ch', 'protonmail.ch', false), ('pm.me', 'pm.me', false)
),
mailboxes as (
  select e.id, e.email, e.created_at, c.name || '@' || p.mailbox_domain as mailbox
    from public.early_access e
    join providers p on p.domain = split_part(e.email, '@', 2)
   cross join lateral (select split_part(split_part(e.email, '@', 1), '+', 1) as name) n
   cross join lateral (select case when p.ignores_dots then replace(n.name, '.', '') else n.name end as name) c
   -- A name of nothing but a tag or dots (`+x@gmail.com`, `..@gmail.com`) names no mailbox.
   where c.name <> ''
),
firsts as (
  select b.id, b.email, b.created_at,
         first_value(b.email) over (partition by b.mailbox order by b.created_at, b.id) as repeats
    from mailboxes b
)
select f.id, f.email, f.created_at, f.repeats
  from firsts f
 where f.email <> f.repeats;
comment on view public.early_access_repeats is
  'Sign-ups that reach the same mailbox as an earlier one (Gmail''s dots, + tags), with the earliest address (repeats).';

-- What the planner should know of the domains below: how many there are, so that it counts them
-- in a hash table, in parallel, as it does the quarter hours (40_sign_ups_by_hour.sql). Statistics,
-- not an index: ANALYZE gathers them; a sign-up writes nothing for them.
create statistics public.early_access_email_domains
  on (split_part(email, '@', 2))
  from public.early_access;

-- The list by email domain (the part after the `@`, stored lowercase), every domain in one row:
-- a project answers at most 1,000 rows at once, and each further page would count the whole list
-- again. `counts` maps each domain to [its sign-ups, of them marked past a pace, of them later
-- sign-ups to a mailbox reached before, of those marked past a pace]: with them the command
-- counts every reason, and each marked sign-up once. Counted in a hash table, without sorting
-- the list; the marks and the repeats, a small part of it, apart.
create view public.early_access_domain_counts with (security_invoker = true) as
with per_domain as (
  select split_part(e.email, '@', 2) as domain, count(*) as sign_ups
    from public.early_access e
   group by 1
),
past_pace as (
  select split_part(e.email, '@', 2) as domain, count(*) as sign_ups
    from public.early_access_marks m
    join public.early_access e on e.id = m.sign_up_id
   group by 1
),
repeats as (
  select split_part(r.email, '@', 2) as domain, count(*) as sign_ups, count(m.sign_up_id) as past_pace
    from public.early_access_repeats r
    left join public.early_access_marks m on m.sign_up_id = r.id
   group by 1
)
select coalesce(jsonb_object_agg(d.domain, jsonb_build_array(d.sign_ups, coalesce(p.sign_ups, 0),
                                                              coalesce(r.sign_ups, 0), coalesce(r.past_pace, 0))),
                '{}') as counts
  from per_domain d
  left join past_pace p on p.domain = d.domain
  left join repeats r on r.domain = d.domain;
comment on view public.early_access_domain_counts is
  'One row: each email domain''s [sign-ups, marked past a pace, repeating a mailbox, both].';

-- The same domains with when their first and latest sign-up came, and two of their addresses (the
-- first and the last in alphabetical order, which a hash table keeps without sorting the list):
-- `domains` maps each to [sign-ups, first instant, latest instant, an address, another]. The
-- command shows those it marks.
create view public.early_access_domains with (security_invoker = true) as
select coalesce(jsonb_object_agg(d.domain, jsonb_build_array(d.sign_ups, d.first_at, d.last_at, d.an_address,
                                                              d.another)),
                '{}') as domains
  from (select split_part(e.email, '@', 2) as domain,
               count(*) as sign_ups,
               min(e.created_at) as first_at,
               max(e.created_at) as last_at,
               min(e.email) as an_address,
               max(e.email) as another
          from public.early_access e
         group by 1) d;
comment on view public.early_access_domains is
  'One row: each email domain''s [sign-ups, first, latest, the first and last address alphabetically].';

-- Later sign-ups to a mailbox, grouped by the earliest address: one row per mailbox reached again.
create view public.early_access_mailboxes with (security_invoker = true) as
select r.repeats,
       count(*)::integer as sign_ups,
       min(r.created_at) as first_at,
       max(r.created_at) as last_at,
       (array_agg(r.email order by r.created_at, r.id))[1:3] as some_emails
  from public.early_access_repeats r
 group by r.repeats;
comment on view public.early_access_mailboxes is
  'Later sign-ups to a mailbox reached before, per earliest address (repeats): how many, when, the first few.';

-- The owner's command reads them with the secret key (service_role); the public roles get nothing.
revoke all on table public.early_access_repeats, public.early_access_domain_counts,
                    public.early_access_domains, public.early_access_mailboxes
  from anon, authenticated, service_role;
grant select on table public.early_access_repeats, public.early_access_domain_counts,
                      public.early_access_domains, public.early_access_mailboxes
  to service_role;
