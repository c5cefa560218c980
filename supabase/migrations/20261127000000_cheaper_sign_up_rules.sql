-- The sign-up rules at less cost per sign-up, the same rules: a source's key and fresh state in
-- one pass over the two scopes, the shard picked inline rather than by a function call (about
-- half that statement's time), and an empty source found by one JSON path test rather than a
-- subquery over its buckets. `npm run bench:rules` has the figures.

-- Admits a visitor's sign-up: refuses it past a ceiling, counts it, marks it past a pace. Fires
-- after early_access_1_check, so a sign-up the checks refuse is never counted. A refusal is
-- decided on a plain read of its two sources, before any write or lock; an admitted sign-up then
-- adds itself to both under their rows' locks (address, then network), so concurrent requests of
-- one source take turns and none slips past a ceiling; if it fails later, its count rolls back.
-- One plan for all (force_generic_plan), not one per client.
create or replace function private.admit_sign_up()
returns trigger language plpgsql security definer
set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  at float8 := extract(epoch from pg_catalog.now());
  -- The client as the edge saw it: Cloudflare's cf-connecting-ip on Supabase, else the
  -- right-most x-forwarded-for entry, which the last proxy added (the client wrote the rest).
  headers json := nullif(current_setting('request.headers', true), '')::json;
  address text := coalesce(nullif(btrim(headers ->> 'cf-connecting-ip'), ''),
                           nullif(btrim(split_part(headers ->> 'x-forwarded-for', ',', -1)), ''));
  ip inet;
  source record;
  both_new boolean;
  any_new boolean;
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
    if ip << inet '::ffff:0.0.0.0/96' then
      ip := inet '0.0.0.0' + (ip - inet '::ffff:0.0.0.0');
    end if;
  end if;

  -- Each source is a keyed hash of the scope's name and the client in it, then the shard it is
  -- counted in, at random (`network:192.0.2.0#3`; no suffix for one shard), so no two scopes
  -- share one; with what each holds (a plain read), and each scope's fresh state. One pass over
  -- the two scopes, with no function call: this runs for every sign-up.
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

  -- A source never seen passes no limit: each allows at least one. A scope with no limits keeps
  -- no state (below), so no turn to take on its row.
  if source.address_arrivals is not null or source.network_arrivals is not null then
    perform private.refuse_past_ceiling(private.arrivals_after(source.address_arrivals, source.address_fresh, at),
                                        private.arrivals_after(source.network_arrivals, source.network_fresh, at), at);
  end if;
  with counted as (
    insert into private.sign_up_sources as s (source_key, arrivals)
    select * from (values (source.address_key, source.address_fresh), (source.network_key, source.network_fresh)) v (k, a) where a <> '{}'
    on conflict (source_key) do update set arrivals = private.arrivals_after(s.arrivals, excluded.arrivals, at)
    returning s.source_key, s.arrivals, s.xmax = 0 as added)
  select bool_and(c.added), bool_or(c.added),
         (array_agg(c.arrivals) filter (where c.source_key = source.address_key))[1],
         (array_agg(c.arrivals) filter (where c.source_key = source.network_key))[1]
    into both_new, any_new, source.address_arrivals, source.network_arrivals
    from counted c;

  if not both_new then
    -- Requests that passed the plain read together: the one past the ceiling is refused here.
    perform private.refuse_past_ceiling(source.address_arrivals, source.network_arrivals, at);
    -- 30_marks.sql
    perform private.mark_past_pace(new.id, source.address_key, source.address_arrivals, source.network_arrivals, at);
  end if;
  -- One sign-up in eight that adds a source (by its address's hash, so at random) forgets up to
  -- 32: sign-ups add at most two rows each and look at four on average, so a backlog drains.
  if any_new and get_byte(source.address_key, 0) < 32 then
    perform private.forget_empty_sources(source.address_key, at);
  end if;

  perform set_config('early_access.admitted_sign_up', new.id::text, true);
  return new;
end;
$$;

-- Its one caller computes the shard inline now.
drop function private.shard_suffix(integer);

-- Forgets the sources that follow `after` in key order, at most 32, whose buckets are all empty
-- at `at`: such a state says no more than none. Keys are hashes, so these are rows picked at
-- random; only they are locked, and none another request holds (two sign-ups never wait for each
-- other here). One plan for all, made without statistics: none can turn it into a scan.
create or replace function private.forget_empty_sources(after bytea, at float8)
returns void language plpgsql set search_path = '' set plan_cache_mode = force_generic_plan as $$
begin
  delete from private.sign_up_sources
   where source_key in (
     select source.source_key from private.sign_up_sources source
      where source.source_key = any (array(
              select following.source_key from private.sign_up_sources following
               where following.source_key > after order by following.source_key limit 32))
        and coalesce((select max(a.value::float8) from pg_catalog.jsonb_each_text(source.arrivals) a), 0) < at
        for update of source skip locked);
end;
$$;
