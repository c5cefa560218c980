-- What the previous migration (20261122120000_guard_sign_ups.sql) left open, found by an
-- attacker's pass:
--   1. its limits counted in fixed calendar windows: 10 sign-ups just before a minute turned and
--      10 just after passed, and the daily caps doubled around midnight UTC. Now each limit holds
--      over ANY window of its length: never more than N sign-ups in any W;
--   2. one client could lock a whole network out for up to a day (the per-network daily cap).
--      The network's cap is now per hour, so an address that never signed up waits at most an
--      hour because of its neighbours; an IPv6 customer is its /56 (what ISPs hand out), not its
--      /64, which it could rotate through to dodge the per-address limits;
--   3. a sign-up without a client address was counted in one bucket shared by everyone; now it
--      is refused;
--   4. `lower()` ran before the address checks, and lowercases some non-ASCII letters to ASCII
--      (the Kelvin sign to k, a dotted capital I to i followed by a combining dot, depending on
--      the locale): addresses a browser refuses were stored as others. Only ASCII letters are
--      lowered now, and anything else fails the address check as the browser's does;
--   5. the phone let through invisible characters that are neither control nor format
--      characters: every Default_Ignorable_Code_Point is refused now, assigned or not.
--
-- What these rules do NOT do, stated plainly: checking whether an address is on the list costs
-- nothing. A sign-up of an address already on the list fails with 23505 when its transaction
-- commits, and everything it counted rolls back with it. Counting it anyway would need a
-- write that survives the rollback (an autonomous transaction, dblink), which PostgREST's one
-- transaction per request does not have. It tells nobody more than the spec's own answer
-- ("This email is already registered for early access.") tells anyone who asks.

-- 1. and 2. Limits over any window ---------------------------------------------------------

-- One row per client and limit: the instants of its admitted sign-ups within the last window,
-- oldest first (at most max_sign_ups of them). A sign-up is admitted when fewer than
-- max_sign_ups remain after dropping those older than the window: a sliding-window log, exact
-- for every window. (A GCRA's single timestamp allows bursts: with a burst of N, up to 2N - 1
-- land in some window of length W.)
drop table private.sign_up_counters;

create table private.sign_up_windows (
  client_key bytea not null,
  limit_name text not null references private.sign_up_limits (name) on update cascade on delete cascade,
  admitted timestamptz[] not null,
  -- When the newest admitted sign-up leaves the window, and the row can go.
  expires_at timestamptz not null,
  primary key (client_key, limit_name)
);
create index sign_up_windows_expires_at_idx on private.sign_up_windows (expires_at);
comment on table private.sign_up_windows is
  'The sign-ups admitted per client and limit within its window, as a keyed hash of the client: never its address.';

update private.sign_up_limits set ipv6_prefix = 56 where name in ('per address per minute', 'per address per day');
delete from private.sign_up_limits where name = 'per network per day';
insert into private.sign_up_limits (name, window_length, max_sign_ups, ipv4_prefix, ipv6_prefix)
values ('per network per hour', interval '1 hour', 200, 24, 48);

-- 3. The client as the edge saw it, as before, but null (never a shared '') when unknown.
create or replace function private.client_address(ipv4_prefix integer, ipv6_prefix integer)
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
    nullif(btrim(forwarded[cardinality(forwarded)]), '')
  );
  parsed inet;
begin
  if address is null then
    return null;
  end if;
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

create or replace function private.admit_sign_up()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  secret bytea := (select s.secret from private.client_key_secret s);
  address text;
  sign_up_limit private.sign_up_limits;
  recent timestamptz[];
  excess integer;
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
    address := private.client_address(sign_up_limit.ipv4_prefix, sign_up_limit.ipv6_prefix);
    if address is null then
      raise sqlstate 'PGRST' using
        message = json_build_object(
          'code', 'PT400',
          'message', 'The client''s address is unknown',
          'details', 'Sign-ups are limited per address; a request must come through the API gateway.',
          'hint', null
        )::text,
        detail = json_build_object('status', 400, 'headers', json_build_object())::text;
    end if;

    -- Atomic: concurrent requests of one client queue on this row, each seeing the instants the
    -- previous one committed. A request that fails later rolls its instant back.
    insert into private.sign_up_windows as w (client_key, limit_name, admitted, expires_at)
    values (
      pg_catalog.sha256(secret || convert_to(address, 'UTF8')),
      sign_up_limit.name,
      array[now()],
      now() + sign_up_limit.window_length
    )
    -- (Sorted with this one among them: a transaction that started earlier may commit later.)
    on conflict (client_key, limit_name) do update set
      admitted = array(
        select instant from pg_catalog.unnest(w.admitted || now()) as instant
         where instant > now() - sign_up_limit.window_length
         order by instant
      ),
      expires_at = greatest(w.expires_at, now() + sign_up_limit.window_length)
    returning admitted into recent;

    excess := pg_catalog.cardinality(recent) - sign_up_limit.max_sign_ups;
    if excess > 0 then
      -- PostgREST's convention for choosing the HTTP answer (429, with Retry-After): the wait
      -- until enough earlier sign-ups have left the window.
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
            'Retry-After',
            greatest(1, ceil(extract(epoch from recent[excess] + sign_up_limit.window_length - now())))::integer::text
          )
        )::text;
    end if;
  end loop;

  -- Rows whose window has passed: prune a few per sign-up, skipping rows another request holds.
  delete from private.sign_up_windows
   where ctid in (
     select ctid from private.sign_up_windows
      where expires_at < now()
      limit 100
      for update skip locked
   );

  perform set_config('early_access.admitted_sign_up', new.id::text, true);
  return new;
end;
$$;

-- 4. and 5. What is stored -----------------------------------------------------------------

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
  new.phone := nullif(regexp_replace(new.phone,
    '^[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+|[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$', '', 'g'), '');
  return new;
end;
$$;

-- Free text, at most 32 characters, with nothing invisible in it: no control (Cc) or format
-- (Cf) characters, line or paragraph separators, blank fillers (Braille, Hangul), private-use
-- characters, noncharacters, and no Default_Ignorable_Code_Point at all (Unicode's
-- DerivedCoreProperties.txt), assigned or not: combining grapheme joiner, variation selectors,
-- Mongolian and Khmer invisibles, tag characters, and the ranges kept for future ones.
alter table public.early_access drop constraint early_access_phone_check;
alter table public.early_access add constraint early_access_phone_check check (
  char_length(phone) between 1 and 32
  and phone !~ '^\s|\s$'
  and phone !~ '[\u0001-\u001f\u007f-\u009f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u2800\u3164\ue000-\uf8ff\ufdd0-\ufdef\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\ufffe\uffff\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff\U000f0000-\U0010ffff\U0001fffe-\U0001ffff\U0002fffe-\U0002ffff\U0003fffe-\U0003ffff\U0004fffe-\U0004ffff\U0005fffe-\U0005ffff\U0006fffe-\U0006ffff\U0007fffe-\U0007ffff\U0008fffe-\U0008ffff\U0009fffe-\U0009ffff\U000afffe-\U000affff\U000bfffe-\U000bffff\U000cfffe-\U000cffff\U000dfffe-\U000dffff\U000efffe-\U000effff]'
) not valid;
-- NOT VALID, as before: rows stored under the older rules are left alone (see the README).

-- Privileges -------------------------------------------------------------------------------

revoke all on table private.sign_up_windows from public, anon, authenticated, service_role;
revoke all on all functions in schema private from public, anon, authenticated, service_role;
