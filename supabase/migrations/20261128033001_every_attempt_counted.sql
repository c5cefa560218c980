-- Every attempt is charged to its client's ceilings where no rollback reaches, before anything
-- can tell a listed address from a new one, in every scope a sign-up counts in: the ceilings
-- move from the sources' table to sequences (one per slot of each ceiling), and the failed
-- requests' own buckets go. The sources' table keeps the paces; its rows and the hashing key
-- stay as they are. The configuration tables get their statistics. As in supabase/schemas/20_sign_up_limits.sql,
-- 25_sign_up_rules.sql and 30_marks.sql.

-- The rules of the baseline, all of them replaced below.
drop trigger early_access_0_one_row on public.early_access;
drop trigger early_access_2_admit on public.early_access;
drop trigger early_access_4_duplicate on public.early_access;
drop function private.one_sign_up_per_request(), private.admit_sign_up(), private.refuse_duplicate(),
  private.sign_up_clock(), private.client_address(), private.client_in_scope(text, integer, integer),
  private.refuse(integer, text, integer), private.forget_empty_sources(bytea, float8);
-- With it go every function that takes a source: sources_of, with_sign_up, limits_over,
-- refuse_past_ceiling, count_in_source, count_failed_request, mark_past_pace.
drop type private.sign_up_source cascade;
do $$
begin
  for slot in 0..255 loop
    execute format('drop sequence private.failed_requests_%s', slot);
  end loop;
end;
$$;

-- 20_sign_up_limits.sql
comment on table private.sign_up_scopes is 'What one client is, per scope of the sign-up limits, and in how many shards its paces are counted.';

-- How the rules keep their counts, in numbers (25_sign_up_rules.sql says how each is used):
--   - ceiling_slots: each ceiling counts its clients in this many slots, a sequence each, as a
--     slot's count outlives a rollback (the rules' "Attempts"). A client shares its slot with
--     about one in ceiling_slots of the others, so more slots, fewer clients riding free while a
--     stranger fills theirs; each slot is a relation of 8 kB. Read when a ceiling is added: to
--     change it on a live project, update it in a migration, which makes the slots anew (empty).
--   - forget_batch and forget_one_in: one sign-up in forget_one_in that adds a source looks at
--     forget_batch others and forgets those whose paces are all empty, so that the paces' table
--     stays about as large as a day's clients.
create table private.sign_up_counting (
  only_row boolean primary key default true check (only_row),
  ceiling_slots integer not null check (ceiling_slots between 1 and 4096),
  forget_batch integer not null check (forget_batch > 0),
  forget_one_in integer not null check (forget_one_in between 1 and 256)
);
comment on table private.sign_up_counting is 'How the sign-up rules keep their counts: slots per ceiling, and how fast empty paces are forgotten.';
insert into private.sign_up_counting (ceiling_slots, forget_batch, forget_one_in) values (256, 32, 8);

-- The statistics the planner reads for these tables, taken now: autovacuum analyzes a table only
-- after 50 changed rows, and a table never analyzed is planned as if it held a thousand rows,
-- which makes a sign-up's plans costly enough for PostgreSQL to compile them (JIT) where it can.
analyze private.sign_up_scopes, private.sign_up_limits, private.sign_up_counting;

revoke all on table private.sign_up_counting from public, anon, authenticated, service_role;

-- 25_sign_up_rules.sql
-- The sign-up rules: how the limits of 20_sign_up_limits.sql are kept. Supabase does not
-- rate-limit its REST API, so the database does, in two places, each deciding one thing:
--
--   - Attempts: every request that reaches the rules is charged to its client's ceilings, where
--     no rollback reaches, before anything can tell a listed address from a new one. Past a
--     ceiling, it is refused (429). Whatever fails after (a duplicate, a second row, a failing
--     cast in PostgREST's `select`, a timeout) has already paid: asking costs what signing up
--     costs.
--   - Paces: a stored sign-up is counted in its sources' paces, in a table, with the sign-up's
--     own transaction; past a pace it is marked for the owner's review (30_marks.sql).
--
-- The trigger private.admit_sign_up reads top to bottom as the steps: the instant, the client,
-- its two sources, the charge, a duplicate held back, the paces under each source's lock, the
-- mark, the forgetting.
--
-- Locks, in the one order every request takes them, so that no two requests wait for each other
-- in a circle (a deadlock, which PostgREST answers with 500): first the slots of the client's
-- ceilings, in the order of `private.sign_up_ceilings`, each held only while it is read and
-- written and released before the next step; then the address's pace row, then the network
-- shard's, until the transaction ends. A request's second row is refused before it takes any.

analyze private.client_key_secret;

-- One source of a sign-up, as the steps below pass it on: its scope, its key (a keyed hash of
-- the client in the scope, and of its shard for a scope of several), the key of the whole client
-- (the same for a scope of one shard), the seconds one sign-up adds to each of its scope's paces,
-- their state (null for a source never seen), and whether this sign-up added it (its first). A
-- state always travels with its scope, so no step can read one scope's state with the other's
-- limits.
create type private.sign_up_source as (scope text, source_key bytea, client_key bytea, seconds_per_sign_up jsonb,
                                       empty_at jsonb, added boolean);

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

-- The sources a sign-up from `client` counts in, one per scope (else null), with what each holds
-- now (a plain read: no lock). A client's key is a keyed hash of the scope's name and the client
-- in it (`network:192.0.2.0`), so no two scopes share one; a source's key adds, for a scope of
-- several shards, the shard this sign-up's paces count in, at random (`network:192.0.2.0#3`).
-- A sign-up in a shard counts `shards` times in that shard's paces, each of which holds its
-- share of the pace.
create function private.sources_of(client text, out address private.sign_up_source, out network private.sign_up_source)
language plpgsql volatile set search_path = '' as $$
declare
  source private.sign_up_source;
begin
  for source in
    select s.name, k.source_key, k.client_key, paces.seconds_per_sign_up,
           (select stored.empty_at from private.sign_up_sources stored where stored.source_key = k.source_key), null
      from private.sign_up_scopes s, private.client_key_secret c,
           lateral (select pg_catalog.jsonb_object_agg(l.kind || ' ' || l.name, extract(epoch from l.window_length)::float8 * s.shards / l.max_sign_ups)
                             as seconds_per_sign_up
                      from private.sign_up_limits l where l.per = s.name and l.kind = 'pace') paces,
           lateral (select c.secret || convert_to(s.name || ':' || private.client_in_scope(client, s.ipv4_prefix, s.ipv6_prefix), 'UTF8')
                             as named) n,
           lateral (select pg_catalog.sha256(n.named) as client_key,
                           pg_catalog.sha256(n.named || convert_to(case when s.shards > 1 then '#' || floor(pg_catalog.random() * s.shards)::integer else '' end, 'UTF8'))
                             as source_key) k
  loop
    if source.scope = 'address' then address := source; else network := source; end if;
  end loop;
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

-- Attempts --------------------------------------------------------------------------------------
-- A request that fails after the rules have looked at it rolls back everything it wrote: had its
-- count been written with it, only the requests that succeed would pay, and asking whether an
-- address is on the list (a duplicate, or a cast in `select` that fails only on a new row) would
-- cost nothing. So attempts are counted in sequences, whose setval outlives the transaction.
--
-- Each ceiling is a leaky bucket per client, as every limit is (20_sign_up_limits.sql), kept in
-- one of its slots: the client's key picks the slot. A slot's sequence holds, in one bigint, the
-- instant its bucket is empty again, in milliseconds since 2026 (41 bits, until the year 2095),
-- and a fingerprint of the client it counts (the low 22 bits). A client counts in its
-- slot when the slot is empty or already its own; a slot that still holds a stranger's count is
-- neither charged nor read for it. So nobody is refused for a stranger's flood, and a flood
-- rides free only while a stranger's count fills its slot: about one client in
-- `ceiling_slots`, for the seconds that count takes to drain (the README says what an attacker
-- can do with that).

-- Each ceiling's slots: made when a ceiling is added, and made anew (empty) when the number of
-- slots changes, so that no ceiling is ever without them. A ceiling that is removed keeps its
-- slots, unused, until it is added again.
create table private.sign_up_ceilings (name text primary key, slots regclass[] not null);
comment on table private.sign_up_ceilings is 'The sequences each ceiling counts attempts in, one per slot.';

-- Makes the slots (`ceiling per address per hour #17`) of each ceiling that has none, or not as
-- many as private.sign_up_counting says.
create function private.make_ceiling_slots()
returns void language plpgsql set search_path = '' as $$
declare
  wanted integer := (select c.ceiling_slots from private.sign_up_counting c);
  ceiling record;
begin
  for ceiling in select c.name, c.slots from private.sign_up_ceilings c where array_length(c.slots, 1) <> wanted loop
    execute (select string_agg(format('drop sequence %s', slot), '; ') from unnest(ceiling.slots) slot);
    delete from private.sign_up_ceilings c where c.name = ceiling.name;
  end loop;
  for ceiling in
    select l.name, array(select format('private.%I', format('ceiling %s #%s', l.name, slot)) from generate_series(0, wanted - 1) slot) as slots
      from private.sign_up_limits l
     where l.kind = 'ceiling' and not exists (select from private.sign_up_ceilings c where c.name = l.name)
  loop
    execute (select string_agg(format('create unlogged sequence %s as bigint minvalue 0; '
                                      'revoke all on sequence %1$s from public, anon, authenticated, service_role', slot), '; ')
               from unnest(ceiling.slots) slot);
    insert into private.sign_up_ceilings (name, slots) values (ceiling.name, ceiling.slots::regclass[]);
  end loop;
  analyze private.sign_up_ceilings;
end;
$$;

create function private.ceilings_keep_their_slots()
returns trigger language plpgsql set search_path = '' as $$
begin
  perform private.make_ceiling_slots();
  return null;
end;
$$;

create trigger sign_up_ceilings_follow_limits
  after insert or update on private.sign_up_limits
  for each statement execute function private.ceilings_keep_their_slots();
create trigger sign_up_ceilings_follow_counting
  after update on private.sign_up_counting
  for each statement execute function private.ceilings_keep_their_slots();
select private.make_ceiling_slots();

-- The slot of each ceiling a client counts in, in the order the locks are taken: the ceiling,
-- its limit, the slot's sequence, the client's fingerprint, and the bucket's sizes in
-- milliseconds.
create type private.ceiling_slot as (name text, max_sign_ups integer, slot regclass, fingerprint bigint,
                                     window_ms bigint, ms_per_attempt bigint);

-- Charges one attempt, at `at`, to each ceiling of the client's two scopes, or refuses it (429)
-- past one, charging none: the ceiling furthest over is named, with the seconds until one more
-- fits. A bucket is over when it holds more than max_sign_ups (with half a millisecond per attempt
-- it holds, which absorbs each attempt's rounding to the millisecond). Each slot is locked (a session lock, so that it can be released at
-- once) only while it is read and written: the attempts of one client take turns for
-- microseconds, never for a transaction, and whatever fails in between releases the locks.
create function private.charge_attempt(address private.sign_up_source, network private.sign_up_source, at float8)
returns void language plpgsql set search_path = '' as $$
declare
  -- A slot's value: the instant in milliseconds since 2026 (its first second here, in seconds
  -- since 1970), above a fingerprint of this many bits.
  zero constant float8 := 1767225600;
  fingerprint_bits constant integer := 22;
  fingerprint_mask constant bigint := (1::bigint << fingerprint_bits) - 1;
  slots private.ceiling_slot[];
  now_ms bigint := round((at - zero) * 1000);
  held bigint;
  empty_at bigint[];
  worst integer;
begin
  slots := array(
    select row(l.name, l.max_sign_ups,
               c.slots[1 + ('x' || encode(substring((source).client_key from 1 for 4), 'hex'))::bit(32)::bigint % array_length(c.slots, 1)],
               ('x' || encode(substring((source).client_key from 5 for 4), 'hex'))::bit(32)::bigint & fingerprint_mask,
               (extract(epoch from l.window_length) * 1000)::bigint,
               round(extract(epoch from l.window_length) * 1000 / l.max_sign_ups))::private.ceiling_slot
      from (values (1, address), (2, network)) as sources (position, source)
      join private.sign_up_limits l on l.per = (source).scope and l.kind = 'ceiling'
      join private.sign_up_ceilings c on c.name = l.name
     order by sources.position, l.window_length, l.name);
  begin
    perform pg_catalog.pg_advisory_lock(s.slot::oid::integer, 0) from unnest(slots) s;
    for i in 1 .. cardinality(slots) loop
      held := coalesce(pg_catalog.pg_sequence_last_value(slots[i].slot), 0);
      empty_at[i] := case
        when held >> fingerprint_bits <= now_ms then now_ms + slots[i].ms_per_attempt                       -- empty
        when held & fingerprint_mask = slots[i].fingerprint then (held >> fingerprint_bits) + slots[i].ms_per_attempt -- its own
        end;                                                                                                     -- a stranger's
      if empty_at[i] - now_ms > slots[i].window_ms + slots[i].max_sign_ups / 2
         and (worst is null or empty_at[i] - slots[i].window_ms > empty_at[worst] - slots[worst].window_ms) then
        worst := i;
      end if;
    end loop;
    if worst is null then
      perform pg_catalog.setval(slots[i].slot, empty_at[i] << fingerprint_bits | slots[i].fingerprint)
         from generate_subscripts(slots, 1) i where empty_at[i] is not null;
    end if;
  exception when others or query_canceled then
    perform pg_catalog.pg_advisory_unlock(s.slot::oid::integer, 0) from unnest(slots) s;
    raise;
  end;
  perform pg_catalog.pg_advisory_unlock(s.slot::oid::integer, 0) from unnest(slots) s;
  if worst is not null then
    perform private.refuse(slots[worst].max_sign_ups, slots[worst].name,
                           greatest(1, ceil((empty_at[worst] - now_ms - slots[worst].window_ms) / 1000.0))::integer);
  end if;
end;
$$;

-- Paces -----------------------------------------------------------------------------------------

-- Each source's paces (a client in one scope and shard, as a keyed hash, never its address): per
-- pace of its scope, keyed `kind name`, the instant its bucket is empty again ("theoretical
-- arrival time"), in seconds since 1970: a few values, whatever the paces' sizes. Seconds, not
-- timestamps and intervals, whose sums follow the request's time zone (`Prefer: timezone`).
-- Unlogged: a crash empties it, forgetting at most a day of pace; no WAL for it.
comment on table private.sign_up_sources is 'Per source (a keyed hash of the client, never its address), when each pace''s bucket is empty again.';

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

-- The paces a source is past at `at`: those whose bucket holds more than max_sign_ups (a
-- millisecond's slack for rounding), with about how many it holds (a shard's count times the
-- shards: an estimate of the whole). A pure function of the source's state and the instant.
create function private.paces_past(source private.sign_up_source, at float8)
returns table (name text, max_sign_ups integer, sign_ups integer)
language plpgsql stable set search_path = '' as $$
begin
  return query select l.name, l.max_sign_ups, round((b.empty_at - at) / b.window_seconds * l.max_sign_ups)::integer
    from private.sign_up_limits l
   cross join lateral (select extract(epoch from l.window_length)::float8 as window_seconds,
                              (source.empty_at ->> (l.kind || ' ' || l.name))::float8 as empty_at) b
   where l.per = source.scope and l.kind = 'pace'
     and b.empty_at - at > b.window_seconds + 0.001
   order by l.window_length;
end;
$$;

-- Counts a stored sign-up at `at` in its source's paces under the source's row lock, so that
-- concurrent sign-ups of one source take turns, and each is judged at the instant it holds the
-- lock. Returns the source with the sign-up counted, and whether it added the source.
create function private.count_in_source(source private.sign_up_source, at float8)
returns private.sign_up_source language plpgsql set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  counted private.sign_up_source;
begin
  if source is null or source.seconds_per_sign_up is null then return null; end if;
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
      update private.sign_up_sources s set empty_at = counted.empty_at where s.source_key = counted.source_key;
      counted.added := false;
      return counted;
    end if;
    -- Forgotten since the plain read: added anew.
  end loop;
end;
$$;

-- Forgets the sources that follow `after` in key order, at most `batch`, whose buckets are all
-- empty at `at` (such a state says no more than none): rows picked at random, as keys are hashes,
-- and locked only if no other request holds them. One plan for all: no statistics make it a scan.
create function private.forget_empty_sources(after bytea, batch integer, at float8)
returns void language plpgsql set search_path = '' set plan_cache_mode = force_generic_plan as $$
begin
  delete from private.sign_up_sources
   where source_key = any (array(
     select source.source_key from private.sign_up_sources source
      where source.source_key = any (array(
              select following.source_key from private.sign_up_sources following
               where following.source_key > after order by following.source_key limit batch))
        and not pg_catalog.jsonb_path_exists(source.empty_at, '$.* ? (@ >= $at)', pg_catalog.jsonb_build_object('at', at))
        for update of source skip locked));
end;
$$;

-- The trigger -----------------------------------------------------------------------------------

-- One sign-up per request: a visitor's request of several rows is refused at its second row,
-- before that row is checked or takes any lock. Its first row has been charged, and stored or
-- held back as a duplicate (below); either way the request answers the same, so several rows
-- learn no more than one. Fires first of the triggers.
create function private.one_sign_up_per_request()
returns trigger language plpgsql security definer set search_path = '' as $$
begin
  if current_setting('role') in ('anon', 'authenticated') then
    if current_setting('early_access.sign_up_row', true) <> '' then
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

-- Admits a visitor's sign-up: charges the attempt (refused past a ceiling), then, for a new
-- address, counts it in its paces and marks it past one. Fires after early_access_1_check, so a
-- sign-up the checks refuse is never charged. One plan for all (force_generic_plan), not one per
-- client.
create function private.admit_sign_up()
returns trigger language plpgsql security definer
set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  at float8;
  sources record;
  address private.sign_up_source;
  network private.sign_up_source;
  counting record;
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
  perform private.charge_attempt(address, network, at);

  -- A listed address would fail at the unique constraint. It is held back from the insert and
  -- answered as the constraint would, once its rows are all seen (private.refuse_duplicate). An
  -- upsert that ignores duplicates goes on: with `on_conflict=email` it succeeds with no row;
  -- without, PostgREST's conflict is on the id, and the email's constraint fails it. Either way
  -- nothing is stored, so no pace counts it.
  if exists (select from public.early_access e where e.email = new.email) then
    if coalesce(current_setting('request.headers', true)::json ->> 'prefer', '') !~ 'resolution=ignore-duplicates' then
      perform set_config('early_access.duplicate', 'held back', true);
      return null;
    end if;
    perform set_config('early_access.admitted_sign_up', new.id::text, true);
    return new;
  end if;
  -- Sign-ups of one source take turns here, each judged when it holds the lock.
  address := private.count_in_source(address, at);
  network := private.count_in_source(network, at);
  if not (coalesce(address.added, true) and coalesce(network.added, true)) then
    perform private.mark_past_pace(new.id, address, network, private.sign_up_clock()); -- 30_marks.sql
  end if;
  -- Some sign-ups that add a source (by its key, so at random) forget a few empty ones: sign-ups
  -- add at most two rows each and look at more on average, so a backlog drains.
  if address.added or network.added then
    select * into counting from private.sign_up_counting;
    if get_byte((coalesce(address, network)).source_key, 0) < 256 / counting.forget_one_in then
      perform private.forget_empty_sources((coalesce(address, network)).source_key, counting.forget_batch, at);
    end if;
  end if;

  perform set_config('early_access.admitted_sign_up', new.id::text, true);
  return new;
end;
$$;

create trigger early_access_2_admit
  before insert on public.early_access
  for each row execute function private.admit_sign_up();

-- Answers a request whose sign-up was held back as a duplicate as the unique constraint would
-- have, once all its rows are seen (a second row is refused before): with no detail, as
-- PostgreSQL gives none of a table with row level security. The attempt was charged already.
create function private.refuse_duplicate()
returns trigger language plpgsql security definer set search_path = '' as $$
begin
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
revoke all on table private.client_key_secret, private.sign_up_sources, private.sign_up_ceilings
  from public, anon, authenticated, service_role;
revoke all on type private.sign_up_source, private.ceiling_slot from public, anon, authenticated, service_role;
revoke all on function private.check_sign_up(), private.admit_sign_up(), private.one_sign_up_per_request(),
  private.refuse_duplicate(), private.refuse(integer, text, integer), private.make_ceiling_slots(),
  private.ceilings_keep_their_slots(),
  private.charge_attempt(private.sign_up_source, private.sign_up_source, float8), private.sign_up_clock(),
  private.client_address(), private.client_in_scope(text, integer, integer), private.sources_of(text),
  private.with_sign_up(private.sign_up_source, float8), private.paces_past(private.sign_up_source, float8),
  private.count_in_source(private.sign_up_source, float8), private.forget_empty_sources(bytea, integer, float8)
  from public, anon, authenticated, service_role;

-- 30_marks.sql
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
     from (select * from private.paces_past(address, at) union all select * from private.paces_past(network, at)) o
   having count(*) > 0;
end;
$$;

revoke all on function private.mark_past_pace(uuid, private.sign_up_source, private.sign_up_source, float8)
  from public, anon, authenticated, service_role;
