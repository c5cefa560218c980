-- The rules read in the order they run, each fact once, and a sign-up that costs less (the schema
-- files 25_sign_up_rules.sql and 26_applying_the_limits.sql): a sign-up's sources are found once, in
-- step 4, and passed to step 6 in the setting `early_access.sources`; step 4 reads both sources in
-- one look-up (private.as_stored); step 6 counts each in one upsert (private.count_sign_up); every
-- limit's test is private.past_full, and a limit's key a field of its bucket, made once by
-- private.bucket_of. The sources' keys and stored buckets are unchanged: every sign-up, mark and
-- count carries on. The call at the end remakes what the rules read (the buckets, with their keys);
-- no failure's cell changes.
alter type private.sign_up_limit add attribute key text;

drop function private.bucket_past(bigint, bigint, private.sign_up_limit), private.with_sign_up(private.sign_up_source, bigint),
  private.read_source(private.sign_up_source), private.within_ceilings(private.sign_up_source, bigint),
  private.paces_past(private.sign_up_source, bigint), private.count_sign_up(private.sign_up_source, bigint),
  private.sources_of(text, uuid);

create or replace function private.before_sign_up()
returns trigger language plpgsql security definer set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  -- The role the request runs as (current_user is this function's owner).
  visitor constant boolean := current_setting('role') in ('anon', 'authenticated');
  failure constant text := coalesce(current_setting('early_access.failure', true), '');
  client text;
  broken text;
  source private.sign_up_source;
  -- The sources, as step 6 reads them: their scopes and keys.
  counted_in private.sign_up_source[] := '{}';
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
  -- lock waited for). Its sources go on to step 6, which counts it once its statement is done.
  at := private.sign_up_clock();
  foreach source in array private.sources_of(client, new.id) loop
    perform private.within_ceilings(source.limits, private.filled(source.empty_at, source.limits, at), at);
    counted_in := counted_in || row(source.scope, source.source_key, null, null)::private.sign_up_source;
  end loop;
  setting := set_config('early_access.sources', counted_in::text, true);
  setting := set_config('early_access.admitted_sign_up', new.id::text, true);
  return new;
end;
$$;

create or replace function private.after_sign_up()
returns trigger language plpgsql security definer set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  sign_up_id constant uuid := nullif(current_setting('early_access.admitted_sign_up', true), '')::uuid;
  failure constant text := coalesce(current_setting('early_access.failure', true), '');
  at bigint;
  source private.sign_up_source;
  counted record;
  -- Whether every source is new (a first sign-up is past no pace), or any is (some forget others).
  all_added boolean := true;
  any_added boolean := false;
  reasons text[] := '{}';
  first_key bytea;
  counting record;
begin
  -- 5. A duplicate held back, answered as the unique constraint would have (with no detail, as
  -- PostgreSQL gives none of a table with row level security). Its failure was charged already.
  if failure = 'duplicate' then
    raise exception using
      errcode = 'unique_violation',
      message = 'duplicate key value violates unique constraint "early_access_email_key"',
      schema = 'public', table = 'early_access', constraint = 'early_access_email_key';
  end if;
  -- 6. A sign-up stored: not a failure that went on, nor an upsert skipped. Its sources, in the
  -- lock order, each counted and judged when it holds its row's lock.
  if failure <> '' or sign_up_id is null or not private.stored(sign_up_id) then
    return null;
  end if;
  at := private.sign_up_clock();
  foreach source in array current_setting('early_access.sources')::private.sign_up_source[] loop
    source.limits := private.limits_of(source.scope);
    counted := private.count_sign_up(source, at);
    perform private.within_ceilings(source.limits, counted.empty_at, at);
    reasons := reasons || private.paces_past(source.limits, counted.empty_at, at);
    first_key := coalesce(first_key, source.source_key);
    all_added := all_added and counted.added;
    any_added := any_added or counted.added;
  end loop;
  if not all_added and cardinality(reasons) > 0 then
    perform private.record_mark(sign_up_id, first_key, array_to_string(reasons, '; '));
  end if;
  -- Some sign-ups that add a source (by its key, so at random) forget a few empty ones: sign-ups
  -- add at most two rows each and look at more on average, so a backlog drains.
  if any_added then
    select * into counting from private.sign_up_counting;
    if get_byte(first_key, 0) < 256 / counting.forget_one_in then
      perform private.forget_empty_sources(first_key, counting.forget_batch, at);
    end if;
  end if;
  return null;
end;
$$;

create or replace function private.charge_failure(client text)
returns void language plpgsql volatile set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  scopes text[];
  named bytea[];
  ceiling record;
  columns integer[];
  held bigint[];
  least_held bigint;
  at bigint;
  past bigint;
begin
  select array_agg(n.scope), array_agg(n.named) into scopes, named from private.clients_of(client) n;
  for ceiling in
    select f.per, f.bucket, f.sketch_rows, f.sketch_width, f.cells
      from private.failure_sketches f where f.charge_order is not null order by f.charge_order
  loop
    columns := private.sketch_columns(pg_catalog.sha256(named[array_position(scopes, ceiling.per)]),
                                      ceiling.sketch_rows, ceiling.sketch_width);
    for r in 1 .. ceiling.sketch_rows loop
      columns[r] := (r - 1) * ceiling.sketch_width + columns[r] + 1; -- the cell's place in `cells`
      held[r] := pg_catalog.nextval(ceiling.cells[columns[r]]);
    end loop;
    at := private.sign_up_clock();
    -- The least-held cell as charged: a drained one is under full either way, so the lift
    -- changes no answer.
    least_held := null;
    for r in 1 .. ceiling.sketch_rows loop
      least_held := least(least_held, held[r]);
      past := private.past_full(held[r], at, ceiling.bucket);
      if held[r] - (ceiling.bucket).cost_ms < at then
        held[r] := pg_catalog.setval(ceiling.cells[columns[r]], at + (ceiling.bucket).cost_ms);
      elsif past > 0 then
        held[r] := pg_catalog.setval(ceiling.cells[columns[r]], held[r] - greatest((ceiling.bucket).cost_ms, past));
      end if;
    end loop;
    past := private.past_full(least_held, at, ceiling.bucket);
    if past > 0 then
      -- Until the least-held cell, capped at full, has room for one more: a failure's cost at most.
      perform private.refuse(ceiling.bucket, least(past, (ceiling.bucket).cost_ms));
    end if;
  end loop;
end;
$$;

create or replace function private.past_full(empty_at bigint, at bigint, bucket private.sign_up_limit)
returns bigint language plpgsql immutable set search_path = '' as $$
begin
  return empty_at - at - bucket.window_ms - bucket.max_sign_ups / 2;
end;
$$;

create or replace function private.sources_of(client text, sign_up_id uuid)
returns private.sign_up_source[] language plpgsql stable set search_path = '' set enable_seqscan = off as $$
begin
  return array(
    select row(b.scope, k.source_key, b.limits,
               (select s.empty_at from private.sign_up_sources s where s.source_key = k.source_key))::private.sign_up_source
      from private.sign_up_buckets b
     cross join lateral (
       select pg_catalog.sha256(private.client_named((select c.secret from private.client_key_secret c where c.only_row), b.scope,
                                                     private.client_in_scope(client, b.ipv4_prefix, b.ipv6_prefix))
                                || convert_to(case when b.shards > 1
                                                then '#' || pg_catalog.get_byte(pg_catalog.uuid_send(sign_up_id), 15) % b.shards
                                                else '' end, 'UTF8')) as source_key
       offset 0) k
     where cardinality(b.limits) > 0
     order by b.scope);
end;
$$;

create or replace function private.filled(empty_at jsonb, limits private.sign_up_limit[], at bigint)
returns jsonb language plpgsql immutable set search_path = '' as $$
declare
  bucket private.sign_up_limit;
  counted jsonb := coalesce(empty_at, '{}');
begin
  foreach bucket in array limits loop
    counted := counted || pg_catalog.jsonb_build_object(bucket.key, greatest((counted ->> bucket.key)::bigint, at) + bucket.cost_ms);
  end loop;
  return counted;
end;
$$;

create or replace function private.within_ceilings(limits private.sign_up_limit[], empty_at jsonb, at bigint)
returns void language plpgsql volatile set search_path = '' as $$
declare
  bucket private.sign_up_limit;
  past bigint;
begin
  foreach bucket in array limits loop
    if bucket.kind = 'ceiling' then
      past := private.past_full((empty_at ->> bucket.key)::bigint, at, bucket);
      if past > 0 then
        perform private.refuse(bucket, past);
      end if;
    end if;
  end loop;
end;
$$;

create or replace function private.limits_of(scope text)
returns private.sign_up_limit[] language plpgsql stable set search_path = '' as $$
begin
  return (select b.limits from private.sign_up_buckets b where b.scope = limits_of.scope);
end;
$$;

create or replace function private.count_sign_up(source private.sign_up_source, at bigint, out empty_at jsonb, out added boolean)
language plpgsql volatile set search_path = '' set plan_cache_mode = force_generic_plan as $$
begin
  insert into private.sign_up_sources as s (source_key, empty_at)
  values (source.source_key, private.filled(null, source.limits, at))
  on conflict (source_key) do update set empty_at = private.filled(s.empty_at, source.limits, at)
  returning s.empty_at, s.xmax = 0 into empty_at, added;
end;
$$;

create or replace function private.paces_past(limits private.sign_up_limit[], empty_at jsonb, at bigint)
returns text[] language plpgsql immutable set search_path = '' as $$
declare
  bucket private.sign_up_limit;
  held bigint;
  reasons text[] := '{}';
begin
  foreach bucket in array limits loop
    held := (empty_at ->> bucket.key)::bigint;
    if bucket.kind = 'pace' and private.past_full(held, at, bucket) > 0 then
      reasons := reasons || format('about %s sign-ups %s (pace: %s)',
                                   round((held - at)::numeric / bucket.window_ms * bucket.max_sign_ups), bucket.name, bucket.max_sign_ups);
    end if;
  end loop;
  return reasons;
end;
$$;

create or replace function private.bucket_of(l private.sign_up_limits, shards integer)
returns private.sign_up_limit language plpgsql immutable set search_path = '' as $$
declare
  window_ms bigint := (extract(epoch from l.window_length) * 1000)::bigint;
begin
  return row(l.kind, l.name, l.max_sign_ups, window_ms, round(window_ms * shards / l.max_sign_ups::numeric),
             l.kind || ' ' || l.name)::private.sign_up_limit;
end;
$$;

create or replace procedure private.apply_sign_up_limits()
language plpgsql set search_path = '' as $$
declare
  most_at_once constant integer := 3000;
  changes integer;
  cell record;
begin
  create temporary table changed_sketches on commit drop as
    select w.*, coalesce(f.sketch_rows, 0) as made_rows, coalesce(f.sketch_width, 0) as made_width,
           (f.bucket).cost_ms as made_cost_ms
      from private.wanted_failure_sketches() w left join private.failure_sketches f on f.name = w.name;
  -- A cell's name holds its ceiling's, within PostgreSQL's 63 bytes a name.
  if exists (select from pg_temp.changed_sketches c where octet_length(c.name) > 40) then
    raise exception 'A ceiling''s name is at most 40 bytes: its cells are named after it';
  end if;
  -- Every cell of the grids as made and as wanted, and what changes it.
  create temporary table changed_cells on commit drop as
    select private.failure_cell(c.name, r, col) as name, (c.bucket).cost_ms,
           case when not made then 'create' when not wanted then 'drop'
                when c.made_width <> c.sketch_width then 'empty' when c.made_cost_ms <> (c.bucket).cost_ms then 'alter' end as change
      from pg_temp.changed_sketches c,
           generate_series(0, greatest(c.sketch_rows, c.made_rows) - 1) r,
           generate_series(0, greatest(c.sketch_width, c.made_width) - 1) col,
           lateral (select r < c.sketch_rows and col < c.sketch_width as wanted, r < c.made_rows and col < c.made_width as made) grids
     where wanted or made;
  select count(*) into changes from pg_temp.changed_cells c where c.change is not null;
  if changes > most_at_once then
    raise exception 'This change of the failures'' sketches makes, drops or alters % cells in one transaction, more than %', changes, most_at_once
      using hint = 'A 20-connection server cannot lock that many at once: change the sizes in steps of at most 3,000 cells, a migration each.';
  end if;
  -- One statement per cell; no API role is granted a cell made.
  for cell in select * from pg_temp.changed_cells c where c.change is not null loop
    case cell.change
      when 'drop' then
        execute format('drop sequence %s', cell.name);
      when 'create' then
        execute format('create sequence %s as bigint minvalue 0 increment by %s', cell.name, cell.cost_ms);
        execute format('revoke all on sequence %s from public, anon, authenticated, service_role', cell.name);
      when 'empty' then
        execute format('alter sequence %s increment by %s restart with 0', cell.name, cell.cost_ms);
      else
        execute format('alter sequence %s increment by %s', cell.name, cell.cost_ms);
    end case;
  end loop;
  -- Every ceiling's sketch, bucket, cells and place, whatever changed; a ceiling removed keeps its
  -- row and cells, with no place.
  update private.failure_sketches set charge_order = null;
  insert into private.failure_sketches as f (name, sketch_rows, sketch_width, bucket, cells, per, charge_order)
  select c.name, c.sketch_rows, c.sketch_width, c.bucket,
         array(select private.failure_cell(c.name, r, col)::regclass
                 from generate_series(0, c.sketch_rows - 1) r, generate_series(0, c.sketch_width - 1) col
                order by r, col),
         c.per, c.charge_order
    from pg_temp.changed_sketches c
  on conflict (name) do update
    set (sketch_rows, sketch_width, bucket, cells, per, charge_order)
      = (excluded.sketch_rows, excluded.sketch_width, excluded.bucket, excluded.cells, excluded.per, excluded.charge_order);
  drop table pg_temp.changed_cells, pg_temp.changed_sketches;
  analyze private.failure_sketches;
  -- Every scope's buckets.
  delete from private.sign_up_buckets;
  insert into private.sign_up_buckets select * from private.wanted_sign_up_buckets();
  analyze private.sign_up_buckets;
end;
$$;


-- The trigger after the statement tells a visitor's statement by the settings itself: no `when`.
drop trigger early_access_after_insert on public.early_access;
create trigger early_access_after_insert
  after insert on public.early_access
  for each statement execute function private.after_sign_up();

revoke all on function private.past_full(bigint, bigint, private.sign_up_limit), private.sources_of(text, uuid),
  private.filled(jsonb, private.sign_up_limit[], bigint), private.within_ceilings(private.sign_up_limit[], jsonb, bigint),
  private.limits_of(text), private.count_sign_up(private.sign_up_source, bigint), private.paces_past(private.sign_up_limit[], jsonb, bigint)
  from public, anon, authenticated, service_role;

-- The scopes' table says there are two, fixed (20_sign_up_limits.sql).
comment on table private.sign_up_scopes is
  'What one client is in each of the two scopes of the sign-up limits (address, network), in how many shards its sign-ups are counted, and the size of the sketch its failures are counted in.';

call private.apply_sign_up_limits();
