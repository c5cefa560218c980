-- The sign-up list faces the open internet: its API key is public, and Supabase runs PostgREST
-- over a pool of connections with no rate limit of its own. This migration makes the rules
-- hold there:
--   1. a visitor reads back only the row its own request added, keyed to the transaction
--      (the first migration's `created_at = now()` matched every row whose transaction started
--      at the same instant, and leaked other visitors' sign-ups);
--   2. one sign-up per request, and a limited number per client address and network;
--   3. only real addresses are stored, and one request cannot probe whether an address is on
--      the list without spending its limits.
-- Everything the API must not reach lives in the schema `private`, which it does not expose.

create schema private;
comment on schema private is 'Helpers of the public tables; never exposed over the REST API.';

-- 1 and 2. Admitting a sign-up -------------------------------------------------------------

-- How many sign-ups one client may make per window, where one client is everything behind one
-- address (its IPv4 address, or its IPv6 /64, which one device may rotate through freely) or
-- behind one network (an IPv4 /24, an IPv6 /48: what one site or tunnel is given). Change them
-- on a live project in the SQL editor, for example:
--   update private.sign_up_limits set max_sign_ups = 20 where name = 'per address per minute';
create table private.sign_up_limits (
  name text primary key,
  window_length interval not null check (window_length > interval '0'),
  max_sign_ups integer not null check (max_sign_ups > 0),
  ipv4_prefix integer not null check (ipv4_prefix between 0 and 32),
  ipv6_prefix integer not null check (ipv6_prefix between 0 and 128)
);
comment on table private.sign_up_limits is
  'Sign-ups allowed per client and window: a burst that people sharing an address (an office, a campus, a carrier) rarely reach, daily caps against scripts.';
insert into private.sign_up_limits (name, window_length, max_sign_ups, ipv4_prefix, ipv6_prefix) values
  ('per address per minute', interval '1 minute', 10, 32, 64),
  ('per address per day', interval '1 day', 100, 32, 64),
  ('per network per day', interval '1 day', 1000, 24, 48);

-- Sign-ups counted per client and window. The client is a keyed hash of its address, never the
-- address itself, and a row is pruned once its window has passed.
create table private.sign_up_counters (
  client_key bytea not null,
  limit_name text not null,
  window_start timestamptz not null,
  window_end timestamptz not null,
  sign_ups integer not null,
  primary key (client_key, limit_name, window_start)
);
create index sign_up_counters_window_end_idx on private.sign_up_counters (window_end);

-- The key of that hash: random, made once per database, never leaves it.
create table private.client_key_secret (
  only_row boolean primary key default true check (only_row),
  secret bytea not null
);
insert into private.client_key_secret (secret)
select decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');

-- The client as the edge saw it: Cloudflare's cf-connecting-ip on Supabase, else the right-most
-- x-forwarded-for entry, the one the last proxy added (the left-most is whatever the client
-- wrote), cut to the network of the given prefix length.
create function private.client_address(ipv4_prefix integer, ipv6_prefix integer)
returns text
language plpgsql
stable
security invoker
set search_path = ''
as $$
declare
  headers json := nullif(current_setting('request.headers', true), '')::json;
  forwarded text[] := string_to_array(headers ->> 'x-forwarded-for', ',');
  address text := coalesce(
    nullif(btrim(headers ->> 'cf-connecting-ip'), ''),
    nullif(btrim(forwarded[cardinality(forwarded)]), ''),
    ''
  );
  parsed inet;
begin
  begin
    parsed := address::inet;
  exception when invalid_text_representation then
    return address;
  end;
  if parsed << inet '::ffff:0.0.0.0/96' then
    -- An IPv4 client seen through an IPv6 socket.
    parsed := inet '0.0.0.0' + (parsed - inet '::ffff:0.0.0.0');
  end if;
  return host(network(set_masklen(parsed, case family(parsed) when 4 then ipv4_prefix else ipv6_prefix end)));
end;
$$;

-- Runs before each insert. For the API's public roles it admits at most one row per request
-- and counts it against the client's limits, then marks the transaction with the row's id:
-- the policies below let the request add and read back only that row. The mark is a
-- transaction-local setting that nothing a client sends can set (PostgREST sets only
-- `request.*`, from the request itself), and it is gone when the transaction ends.
-- SECURITY DEFINER, to count in private tables the caller cannot touch; nobody may call it
-- (a trigger needs no EXECUTE privilege to fire).
create function private.admit_sign_up()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  secret bytea := (select s.secret from private.client_key_secret s);
  client bytea;
  sign_up_limit private.sign_up_limits;
  counter private.sign_up_counters;
begin
  -- The role the request runs as; inside this function current_user is its owner.
  if current_setting('role') not in ('anon', 'authenticated') then
    return new;
  end if;

  if current_setting('early_access.admitted_sign_up', true) <> '' then
    raise exception 'Only one sign-up per request'
      using hint = 'Send one row at a time.';
  end if;

  -- Always in the same order, so concurrent requests lock the same rows in the same order.
  for sign_up_limit in select * from private.sign_up_limits order by name loop
    client := pg_catalog.sha256(secret || convert_to(
      private.client_address(sign_up_limit.ipv4_prefix, sign_up_limit.ipv6_prefix), 'UTF8'));
    -- Atomic: concurrent requests of one client queue on this row, each seeing the count the
    -- previous one committed. A request that fails later rolls its increment back.
    insert into private.sign_up_counters as c (client_key, limit_name, window_start, window_end, sign_ups)
    select client, sign_up_limit.name, w.start, w.start + sign_up_limit.window_length, 1
      from (select date_bin(sign_up_limit.window_length, now(), timestamptz '2000-01-01 00:00:00+00') as start) w
    on conflict (client_key, limit_name, window_start) do update set sign_ups = c.sign_ups + 1
    returning * into counter;

    if counter.sign_ups > sign_up_limit.max_sign_ups then
      -- PostgREST's convention for choosing the HTTP answer (429, with Retry-After).
      raise sqlstate 'PGRST' using
        message = json_build_object(
          'code', 'PT429',
          'message', 'Too many sign-ups from this address',
          'details', format('At most %s sign-ups %s.', sign_up_limit.max_sign_ups, sign_up_limit.name),
          'hint', 'Try again later.'
        )::text,
        detail = json_build_object(
          'status', 429,
          'headers', json_build_object(
            'Retry-After', greatest(1, ceil(extract(epoch from counter.window_end - now())))::integer::text
          )
        )::text;
    end if;
  end loop;

  -- Windows that have passed: prune a few per sign-up, skipping rows another request holds.
  delete from private.sign_up_counters
   where ctid in (
     select ctid from private.sign_up_counters
      where window_end < now()
      limit 100
      for update skip locked
   );

  perform set_config('early_access.admitted_sign_up', new.id::text, true);
  return new;
end;
$$;

create trigger admit_sign_up
  before insert on public.early_access
  for each row execute function private.admit_sign_up();

drop policy "Visitors can join the early access list" on public.early_access;
drop policy "Visitors can read back only the sign-up they just made" on public.early_access;

create policy "Visitors can add only the sign-up their request was admitted for"
  on public.early_access for insert
  to anon, authenticated
  with check (id = nullif(current_setting('early_access.admitted_sign_up', true), '')::uuid);

-- The site asks for the new row back (insert ... returning): only that row, only within the
-- request that added it. Anything else, a plain read included, sees no rows. (Compared as a
-- uuid, so that a read finds that row by the primary key instead of scanning the table.)
create policy "Visitors can read back only the sign-up their own request added"
  on public.early_access for select
  to anon, authenticated
  using (id = nullif(current_setting('early_access.admitted_sign_up', true), '')::uuid);

-- 3. Only real addresses --------------------------------------------------------------------

-- The normalising trigger moves out of the exposed schema, and trims as the form does.
drop trigger normalize_early_access on public.early_access;
drop function public.normalize_early_access();

create function private.normalize_early_access()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  -- What JavaScript's trim() takes off, as the form does before sending: every Unicode space.
  new.email := lower(regexp_replace(new.email,
    '^[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+|[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$', '', 'g'));
  new.phone := nullif(regexp_replace(new.phone,
    '^[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+|[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$', '', 'g'), '');
  return new;
end;
$$;

create trigger normalize_early_access
  before insert or update on public.early_access
  for each row execute function private.normalize_early_access();

-- Exactly what the form's email field accepts: the browser's type=email grammar (WHATWG "valid
-- e-mail address"), lowercased, at most 254 characters. No JSON text, second '@', spaces,
-- control or format characters.
alter table public.early_access drop constraint early_access_email_check;
alter table public.early_access add constraint early_access_email_check check (
  char_length(email) <= 254
  and email ~ '^[a-z0-9.!#$%&''*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$'
) not valid;

-- Free text (no format check, as the form has none), but at most 32 characters and nothing
-- invisible: no control (Cc) or format (Cf) characters, line or paragraph separators, blank
-- fillers (Hangul, Braille), private-use characters or noncharacters.
alter table public.early_access drop constraint early_access_phone_check;
alter table public.early_access add constraint early_access_phone_check check (
  char_length(phone) between 1 and 32
  and phone !~ '^\s|\s$'
  and phone !~ '[\u0001-\u001f\u007f-\u009f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\u2800\u3164\ue000-\uf8ff\ufdd0-\ufdef\ufeff\uffa0\ufff9-\ufffb\ufffe\uffff\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000f0000-\U0010ffff]'
) not valid;
-- NOT VALID: both checks hold for every row from now on; rows stored before them are left as
-- they are rather than failing the migration. Once those are cleaned up (see the README):
--   alter table public.early_access validate constraint early_access_email_check;
--   alter table public.early_access validate constraint early_access_phone_check;

-- One row per address, checked when the request's transaction commits. Checked at once, as
-- before, a request of several rows would reveal whether its first address is on the list
-- (a duplicate error) before being refused for its second row, and, refused either way, spend
-- none of its limits: free probing. Now such a request is refused as such, whatever it holds.
alter table public.early_access
  drop constraint early_access_email_key,
  add constraint early_access_email_key unique (email) deferrable initially deferred;

-- Privileges -------------------------------------------------------------------------------

-- Nobody but the owner reaches the helpers: not the API roles, and not PUBLIC, which may
-- execute every new function by default.
revoke all on schema private from public, anon, authenticated, service_role;
revoke all on all tables in schema private from public, anon, authenticated, service_role;
revoke all on all functions in schema private from public, anon, authenticated, service_role;
