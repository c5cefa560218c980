-- The sign-up rules at launch-day cost. Most visitors on launch day come from an address (and a
-- network) no sign-up came from before; such a sign-up now costs two keyed hashes and two log
-- rows, and reads no limit:
--   - a log of one sign-up passes no limit (each allows at least one), so the limits are read
--     only for a source seen before;
--   - a log is trimmed to what the limits need only when a sign-up adds to it
--     (private.latest_sign_ups), and to what every limit together needs: the longest window and
--     the largest count. A log kept a little longer still gives every limit its exact answer;
--   - so a log needs no expiry of its own: a source can go once its newest sign-up has left the
--     longest window;
--   - the function's statements are planned once, generically, instead of for each client.
-- The sources' logs stay as they are; marks, paces and ceilings answer as before.

alter table private.sign_up_sources drop column expires_at;

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
create or replace function private.admit_sign_up()
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

revoke all on function private.latest_sign_ups(timestamptz[]) from public, anon, authenticated, service_role;
