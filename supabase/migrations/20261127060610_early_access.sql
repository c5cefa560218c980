-- The early-access list, its rules and the owner's marks: the baseline, what supabase/schemas/
-- declared when it was made (read there, file by file, for the reasons). Every later change is a
-- migration of its own, named by the clock when it is made (`npx supabase migration new <name>`),
-- and never edited once it has landed.

-- supabase/schemas/00_private.sql -----------------------------------------------------------------

-- The schema `private`: the helpers of the public tables (the sign-up limits, their logs, the key
-- of their hashes, the trigger functions). The REST API exposes `public` only, and no API role may
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
-- (private.admit_sign_up, in 20_sign_up_limits.sql) marks its transaction with the row's id, in a
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

-- supabase/schemas/30_marks.sql -------------------------------------------------------------------

-- Sign-ups past a normal pace, marked for the owner's review (20_sign_up_limits.sql marks them), in a
-- table of their own: the public key cannot read a mark or a source, not even on the read-back
-- of its own row, whose `select=*` is the sign-up's own columns only. Unmarked sign-ups record
-- nothing about their source.

create table public.early_access_marks (
  sign_up_id uuid primary key
    -- Checked at commit: the mark is written before the sign-up's own row, in the same request.
    references public.early_access (id) on delete cascade deferrable initially deferred,
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

-- Marks a sign-up past a pace (private.admit_sign_up calls it), with the reasons in words and its source's short keyed id (the
-- first bytes of its address's keyed hash).
create function private.mark_past_pace(sign_up_id uuid, address_key bytea, address_arrivals jsonb,
                                       network_arrivals jsonb, at float8)
returns void language sql set search_path = '' as $$
  insert into public.early_access_marks (sign_up_id, source, reason)
  select sign_up_id, encode(substring(address_key from 1 for 6), 'hex'),
         string_agg(format('about %s sign-ups %s (pace: %s)', p.sign_ups, p.name, p.max_sign_ups), '; ')
    from private.limits_passed(address_arrivals, network_arrivals, at) p
   where p.kind = 'pace'
  having count(*) > 0
$$;

-- Every sign-up with its mark, if any. Security invoker: read with the reader's own rights. Its
-- mark columns are subqueries, so the view stays updatable: the owner removes a source's marked
-- sign-ups through it (`delete … where source = …`).
create view public.early_access_with_marks with (security_invoker = true) as
select e.id, e.email, e.phone, e.created_at,
       (select m.source from public.early_access_marks m where m.sign_up_id = e.id) as source,
       (select m.reason from public.early_access_marks m where m.sign_up_id = e.id) as review
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
revoke all on function private.mark_past_pace(uuid, bytea, jsonb, jsonb, float8)
  from public, anon, authenticated, service_role;

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
