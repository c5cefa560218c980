-- A sign-up never scans the list or the sources, however empty they were when its connection made
-- its plans: each statement that reads them runs in a function with enable_seqscan off (the step
-- 3 and step 6 lookups of the list move into private.listed and private.stored), as in
-- supabase/schemas/25_sign_up_rules.sql and 30_marks.sql. Before, a connection that planned its
-- sign-ups while the tables were nearly empty (a new project, or the list cleared and vacuumed)
-- scanned both whole at every sign-up until autovacuum's next analyze.

create function private.listed(email text)
returns boolean language plpgsql stable set search_path = '' set enable_seqscan = off as $$
begin
  return exists (select from public.early_access e where e.email = listed.email);
end;
$$;

create function private.stored(sign_up_id uuid)
returns boolean language plpgsql stable set search_path = '' set enable_seqscan = off as $$
begin
  return exists (select from public.early_access e where e.id = sign_up_id);
end;
$$;

create or replace function private.read_source(source private.sign_up_source)
returns private.sign_up_source language plpgsql stable set search_path = '' set enable_seqscan = off as $$
begin
  if source.source_key is not null then
    source.empty_at := (select s.empty_at from private.sign_up_sources s where s.source_key = source.source_key);
  end if;
  return source;
end;
$$;

create or replace function private.count_sign_up(source private.sign_up_source, at bigint, out counted private.sign_up_source,
                                      out added boolean)
language plpgsql volatile set search_path = '' set plan_cache_mode = force_generic_plan set enable_seqscan = off as $$
begin
  if source is null then return; end if;
  loop
    select s.empty_at into source.empty_at from private.sign_up_sources s where s.source_key = source.source_key for update;
    counted := private.within_ceilings(private.with_sign_up(source, at), at);
    if source.empty_at is not null then
      update private.sign_up_sources s set empty_at = counted.empty_at where s.source_key = counted.source_key;
      added := false;
      return;
    end if;
    -- A source never seen is added, unless another sign-up added it since: then it takes its turn.
    insert into private.sign_up_sources (source_key, empty_at) values (counted.source_key, counted.empty_at)
    on conflict (source_key) do nothing;
    added := found;
    if added then return; end if;
  end loop;
end;
$$;

create or replace function private.forget_empty_sources(after bytea, batch integer, at bigint)
returns void language plpgsql volatile set search_path = '' set plan_cache_mode = force_generic_plan set enable_seqscan = off as $$
begin
  delete from private.sign_up_sources
   where source_key = any (array(
     select source.source_key from private.sign_up_sources source
      where source.source_key = any (array(
              select following.source_key from private.sign_up_sources following
               where following.source_key > after order by following.source_key limit batch))
        and not pg_catalog.jsonb_path_exists(source.empty_at, '$.* ? (@ > $at)', pg_catalog.jsonb_build_object('at', at))
        for update of source skip locked));
end;
$$;

create or replace function private.before_sign_up()
returns trigger language plpgsql security definer set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  -- The role the request runs as (current_user is this function's owner).
  visitor constant boolean := current_setting('role') in ('anon', 'authenticated');
  failure constant text := coalesce(current_setting('early_access.failure', true), '');
  client text;
  broken text;
  sources record;
  at bigint;
  setting text;
begin
  -- 1. One row per request: refused at its second row, before that row is checked or locks
  -- anything. Whether its first address was listed or not, in either order, the answer is the
  -- same, so several rows learn nothing one would not. Charged, unless its first row was.
  if visitor and (failure <> '' or current_setting('early_access.admitted_sign_up', true) <> '') then
    if failure = '' then
      perform private.charge_failure(private.client_address());
    end if;
    raise exception 'Only one sign-up per request' using hint = 'Send one row at a time.';
  end if;

  -- 2. What is stored (10_early_access.sql), whoever writes it; a visitor's refusal charged first.
  new := private.normalized(new);
  broken := private.broken_check(new);
  if not visitor then
    if broken is not null then perform private.refuse_check(broken); end if;
    return new;
  end if;
  client := private.client_address();
  if broken is not null then
    perform private.charge_failure(client);
    perform private.refuse_check(broken);
  end if;

  -- 3. Failures that go on, charged: a missing address, for the NOT NULL constraint to refuse; a
  -- listed address, held back from the insert (it never reaches the unique check) and answered
  -- as the constraint would once the statement's rows are all seen (step 5). An upsert that
  -- ignores duplicates goes on: with `on_conflict=email` it is skipped, with no row; without,
  -- PostgREST's conflict is on the id, and the email's constraint fails it.
  if new.email is null or private.listed(new.email) then
    perform private.charge_failure(client);
    if new.email is not null
       and coalesce(current_setting('request.headers', true)::json ->> 'prefer', '') !~ 'resolution=ignore-duplicates' then
      setting := set_config('early_access.failure', 'duplicate', true);
      return null;
    end if;
    setting := set_config('early_access.failure', 'charged', true);
    setting := set_config('early_access.admitted_sign_up', new.id::text, true);
    return new;
  end if;

  -- 4. A new address: refused past a ceiling of its client's, on a plain read (no row written, no
  -- lock waited for). It is counted once its statement is done (step 6).
  at := private.sign_up_clock();
  sources := private.sources_of(client, new.id);
  sources.address := private.within_ceilings(private.with_sign_up(private.read_source(sources.address), at), at);
  sources.network := private.within_ceilings(private.with_sign_up(private.read_source(sources.network), at), at);
  setting := set_config('early_access.admitted_sign_up', new.id::text, true);
  return new;
end;
$$;

create or replace function private.after_sign_up()
returns trigger language plpgsql security definer set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  sign_up_id constant uuid := nullif(current_setting('early_access.admitted_sign_up', true), '')::uuid;
  at bigint;
  sources record;
  address record;
  network record;
  reasons text;
  counting record;
begin
  -- 5. A duplicate held back, answered as the unique constraint would have (with no detail, as
  -- PostgreSQL gives none of a table with row level security). Its failure was charged already.
  if current_setting('early_access.failure', true) = 'duplicate' then
    raise exception using
      errcode = 'unique_violation',
      message = 'duplicate key value violates unique constraint "early_access_email_key"',
      schema = 'public', table = 'early_access', constraint = 'early_access_email_key';
  end if;
  -- 6. A sign-up stored: not a failure that went on, nor an upsert skipped.
  if current_setting('early_access.failure', true) <> '' or not private.stored(sign_up_id) then
    return null;
  end if;
  at := private.sign_up_clock();
  sources := private.sources_of(private.client_address(), sign_up_id);
  -- Sign-ups of one source take turns here, each judged when it holds the lock.
  address := private.count_sign_up(sources.address, at);
  network := private.count_sign_up(sources.network, at);
  -- A source's first sign-up is past no pace.
  if not (coalesce(address.added, true) and coalesce(network.added, true)) then
    reasons := concat_ws('; ', private.paces_past(address.counted, at), private.paces_past(network.counted, at));
    if reasons <> '' then
      perform private.record_mark(sign_up_id, coalesce((sources.address).source_key, (sources.network).source_key), reasons);
    end if;
  end if;
  -- Some sign-ups that add a source (by its key, so at random) forget a few empty ones: sign-ups
  -- add at most two rows each and look at more on average, so a backlog drains.
  if address.added or network.added then
    select * into counting from private.sign_up_counting;
    if get_byte((coalesce(address.counted, network.counted)).source_key, 0) < 256 / counting.forget_one_in then
      perform private.forget_empty_sources((coalesce(address.counted, network.counted)).source_key, counting.forget_batch, at);
    end if;
  end if;
  return null;
end;
$$;

create or replace function private.record_mark(sign_up_id uuid, source_key bytea, reasons text)
returns void language plpgsql volatile set search_path = '' set enable_seqscan = off as $$
begin
  insert into public.early_access_marks (sign_up_id, source, reason)
  values (sign_up_id, encode(substring(source_key from 1 for 6), 'hex'), reasons);
end;
$$;

revoke all on function private.listed(text), private.stored(uuid) from public, anon, authenticated, service_role;
