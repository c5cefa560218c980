-- Mark, don't refuse. Offices, campuses, conference Wi-Fi and carrier NAT put hundreds of real
-- people behind one address; the limits refused all but the first ten of them, and told the
-- owner nothing. Now:
--   1. the earlier limits are a source's normal pace: a sign-up past it is stored, and marked
--      for the owner's review with the reason (which pace, by how much); the visitor sees the
--      same success as anyone;
--   2. ceilings far above any crowd refuse a flood with 429, as the limits did, each exact over
--      any window of its length;
--   3. a marked sign-up names its source as a short keyed id (the address's keyed hash, never
--      the address); unmarked sign-ups record nothing about their source. Marks live in a table
--      of their own, which the public key cannot read, not even on the read-back of its own row;
--   4. the owner reads marks through two views, for the secret key only;
--   5. a sign-up's work stays small and bounded: one log per source (the address, its network)
--      instead of one row per limit, the request's headers parsed once, and a prune that looks
--      at a few rows picked at random, never the whole table.

-- 1. and 2. Scopes, paces and ceilings ------------------------------------------------------

-- One row per client and limit gives way to one log per source (below).
drop table private.sign_up_windows;

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

alter table private.sign_up_limits add column per text references private.sign_up_scopes (name);
update private.sign_up_limits set per = split_part(name, ' ', 2);
alter table private.sign_up_limits
  alter column per set not null,
  drop column ipv4_prefix,
  drop column ipv6_prefix,
  add column kind text not null default 'pace' check (kind in ('pace', 'ceiling')),
  drop constraint sign_up_limits_pkey,
  add primary key (kind, name);
alter table private.sign_up_limits alter column kind drop default;
comment on table private.sign_up_limits is
  'Sign-ups per client and window. Past a pace, a sign-up is stored and marked for review; past a ceiling, it is refused (429).';

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
-- of its latest sign-ups, newest first, as many as its largest limit needs and no older than its
-- longest window. Every pace and ceiling of the scope is read off the same log: of any window's
-- sign-ups, exactly the first N are within a limit of N.
-- Unlogged: the log is no record, only a pace; a crash empties it (forgetting at most a day of
-- pace), and sign-ups write no WAL for it. No index but its key: every index is written on
-- every sign-up.
create unlogged table private.sign_up_sources (
  source_key bytea primary key,
  recent timestamptz[] not null,
  -- When its newest sign-up leaves the scope's longest window, and the row can go.
  expires_at timestamptz not null
);
comment on table private.sign_up_sources is
  'The latest sign-ups per source, keyed by a keyed hash of the client: never its address.';

-- Two requests adding one address at once could deadlock: its uniqueness is checked at commit
-- (so that a request of several rows learns nothing before it is refused), where each waited
-- for the other. The one-row-per-source lock of the older limits made such requests take turns
-- by chance; now the address itself does.
create or replace function private.normalize_early_access()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  -- What JavaScript's trim() takes off, as the form does before sending: every Unicode space.
  -- Then only ASCII letters are lowered: lower() would turn some other letters into ASCII ones
  -- (the Kelvin sign into k), and store an address the browser refuses as one it accepts.
  new.email := translate(regexp_replace(new.email,
    '^[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+|[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$', '', 'g'),
    'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
  -- Visitors' requests adding one address take turns. Its uniqueness is checked at commit, where
  -- two of them would each wait for the other's row (a deadlock, answered 500); in turn, the
  -- later one finds the earlier's row committed and fails as a duplicate (23505). Only the API's
  -- public roles, which add one row per request: an owner's import of many rows at once would
  -- hold a lock per row.
  if current_setting('role') in ('anon', 'authenticated') then
    perform pg_advisory_xact_lock(hashtextextended(new.email, 0));
  end if;
  new.phone := nullif(regexp_replace(new.phone,
    '^[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+|[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$', '', 'g'), '');
  return new;
end;
$$;

-- A policy name PostgreSQL cut at 63 characters ("…admitted fo"), said in full within them.
alter policy "Visitors can add only the sign-up their request was admitted fo" on public.early_access
  rename to "Visitors add only the sign-up their request was admitted for";

-- 3. Marks ----------------------------------------------------------------------------------

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

drop function private.client_address(integer, integer);

-- Runs before each insert. For the API's public roles it admits at most one row per request,
-- logs it in the client's two sources (its address and its network), refuses it past a ceiling
-- and marks it past a pace, then marks the transaction with the row's id: the policies let the
-- request add and read back only that row. SECURITY DEFINER, to write in tables the caller
-- cannot touch; nobody may call it (a trigger needs no EXECUTE privilege to fire).
-- Every sign-up runs it, so it runs few statements: one reads the settings, one logs both
-- sources, one prunes; everything else is expressions.
create or replace function private.admit_sign_up()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  -- The client as the edge saw it: Cloudflare's cf-connecting-ip on Supabase, else the
  -- right-most x-forwarded-for entry, the one the last proxy added (the left-most is whatever
  -- the client wrote).
  headers json := nullif(current_setting('request.headers', true), '')::json;
  forwarded text[] := string_to_array(headers ->> 'x-forwarded-for', ',');
  address text := coalesce(
    nullif(btrim(headers ->> 'cf-connecting-ip'), ''),
    nullif(btrim(forwarded[cardinality(forwarded)]), '')
  );
  ip inet;
  secret bytea;
  scopes private.sign_up_scopes[];
  limits private.sign_up_limits[];
  address_span interval;
  network_span interval;
  address_key bytea;
  network_key bytea;
  address_log timestamptz[];
  network_log timestamptz[];
  added_a_source boolean;
  sign_up_limit private.sign_up_limits;
  latest timestamptz[];
  reasons text[] := '{}';
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
  if address ~ '^[0-9a-fA-F:.]+$' then
    ip := address::inet;
    if ip << inet '::ffff:0.0.0.0/96' then
      -- An IPv4 client seen through an IPv6 socket.
      ip := inet '0.0.0.0' + (ip - inet '::ffff:0.0.0.0');
    end if;
  end if;

  select array_agg(l order by l.kind, l.per, l.window_length),
         max(l.window_length) filter (where l.per = 'address'),
         max(l.window_length) filter (where l.per = 'network'),
         (select k.secret from private.client_key_secret k),
         (select array_agg(s order by s.name) from private.sign_up_scopes s)
    into limits, address_span, network_span, secret, scopes
    from private.sign_up_limits l;
  if limits is null then
    -- No limits at all: nothing to count.
    perform set_config('early_access.admitted_sign_up', new.id::text, true);
    return new;
  end if;

  -- Each source is a keyed hash of the scope's name and the client in it (`network:192.0.2.0`),
  -- so that no two scopes share one. scopes[1] is the address, scopes[2] the network.
  address_key := pg_catalog.sha256(secret || convert_to(scopes[1].name || ':' || coalesce(
    host(network(set_masklen(ip, case family(ip) when 4 then scopes[1].ipv4_prefix else scopes[1].ipv6_prefix end))),
    address), 'UTF8'));
  network_key := pg_catalog.sha256(secret || convert_to(scopes[2].name || ':' || coalesce(
    host(network(set_masklen(ip, case family(ip) when 4 then scopes[2].ipv4_prefix else scopes[2].ipv6_prefix end))),
    address), 'UTF8'));

  -- Atomic: concurrent requests of one source queue on its row, each seeing the log the previous
  -- one committed; a request that fails later rolls its entry back, so only stored sign-ups
  -- count. Every request locks its address before its network. A log keeps what the largest
  -- limit needs within its scope's longest window (a new row's expires_at is now + that span),
  -- sorted with this sign-up among them: a transaction that started earlier may commit later.
  with logged as (
    insert into private.sign_up_sources as src (source_key, recent, expires_at)
    values (address_key, array[now()], now() + coalesce(address_span, interval '0')),
           (network_key, array[now()], now() + coalesce(network_span, interval '0'))
    on conflict on constraint sign_up_sources_pkey do update set
      recent = array(
        select instant from pg_catalog.unnest(src.recent || now()) as instant
         where instant > now() - (excluded.expires_at - now())
         order by instant desc
         limit (select max(max_sign_ups) + 1 from private.sign_up_limits)
      ),
      expires_at = greatest(src.expires_at, excluded.expires_at)
    returning src.source_key, src.recent, src.xmax = 0 as added
  )
  select max(recent) filter (where source_key = address_key),
         max(recent) filter (where source_key = network_key),
         bool_or(added)
    into address_log, network_log, added_a_source
    from logged;

  -- A limit of N is passed when the log's (N + 1)th newest sign-up, this one counted, is still
  -- within the window: of any window's sign-ups, exactly the first N are within it. Ceilings
  -- come first (kind order), and refuse.
  foreach sign_up_limit in array limits loop
    latest := case sign_up_limit.per when 'address' then address_log else network_log end;
    continue when latest[sign_up_limit.max_sign_ups + 1] is null
               or latest[sign_up_limit.max_sign_ups + 1] <= now() - sign_up_limit.window_length;
    if sign_up_limit.kind = 'ceiling' then
      -- PostgREST's convention for choosing the HTTP answer: 429, with Retry-After the wait
      -- until the oldest sign-up that keeps this one out has left the window.
      raise sqlstate 'PGRST' using
        message = json_build_object(
          'code', 'PT429',
          'message', 'Too many sign-ups from this address',
          'details', format('At most %s sign-ups %s.', sign_up_limit.max_sign_ups, sign_up_limit.name),
          'hint', 'Try again later.'
        )::text,
        detail = json_build_object(
          'status', 429,
          'headers', json_build_object('Retry-After', greatest(1, ceil(extract(epoch from
            latest[sign_up_limit.max_sign_ups + 1] + sign_up_limit.window_length - now())))::integer::text)
        )::text;
    end if;
    reasons := reasons || format('%s sign-ups %s (pace: %s)',
      (select count(*) from pg_catalog.unnest(latest) as instant
        where instant > now() - sign_up_limit.window_length),
      sign_up_limit.name, sign_up_limit.max_sign_ups);
  end loop;

  if cardinality(reasons) > 0 then
    -- The source's short keyed id: the first bytes of the address's keyed hash.
    insert into public.early_access_marks (sign_up_id, source, reason)
    values (new.id, encode(substring(address_key from 1 for 6), 'hex'), array_to_string(reasons, '; '));
  end if;

  -- One sign-up in eight that added a source (picked by its address's hash, so at random)
  -- prunes the 32 rows that follow its address in key order, if their window has passed. Keys
  -- are hashes, so these too are rows picked at random: sign-ups add at most two rows each and
  -- look at four on average, so a backlog drains; none pays for more than 32, and no statistics
  -- can turn it into a scan of the table. Only expired rows are locked, and none another request
  -- holds: two sign-ups never wait for each other here.
  if added_a_source and get_byte(address_key, 0) < 32 then
    delete from private.sign_up_sources
     where source_key in (
       select source.source_key from private.sign_up_sources source
        where source.source_key = any (array(
                select following.source_key from private.sign_up_sources following
                 where following.source_key > address_key
                 order by following.source_key
                 limit 32))
          and source.expires_at < now()
          for update of source skip locked
     );
  end if;

  perform set_config('early_access.admitted_sign_up', new.id::text, true);
  return new;
end;
$$;

-- Privileges -------------------------------------------------------------------------------

revoke all on table private.sign_up_scopes, private.sign_up_sources
  from public, anon, authenticated, service_role;
revoke all on all functions in schema private from public, anon, authenticated, service_role;

-- The owner's command reads and removes marks with the secret key (service_role); the public
-- roles get nothing.
revoke all on table public.early_access_marks, public.early_access_with_marks, public.early_access_sources
  from anon, authenticated, service_role;
grant select, delete on table public.early_access_marks to service_role;
grant select, delete on table public.early_access_with_marks to service_role;
grant select on table public.early_access_sources to service_role;
