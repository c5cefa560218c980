-- The sign-up rules: how the limits of 20_sign_up_limits.sql are kept. Supabase does not
-- rate-limit its REST API, so the database does. This is the whole design; the READMEs link here.
-- The triggers come first, then what they call, in the order they call it; what makes the limits
-- into what the steps read is in 26_applying_the_limits.sql.
--
-- Two triggers on public.early_access run a visitor's request (the public key's roles, anon and
-- authenticated), one before its row is written and one after its statement:
--
--   before the row (private.before_sign_up), each step either lets the row on or ends the request:
--     1. one row per request: a second row is refused, whatever the first was;
--     2. the row normalised and checked (10_early_access.sql): a row the checks refuse is refused;
--     3. a listed address: held back from the insert, and answered at the end of the statement as
--        the unique constraint would answer it (an upsert that ignores duplicates goes on, to be
--        skipped); a missing address goes on, for the NOT NULL constraint to refuse;
--     4. a new address: its client's ceilings read without a lock; past one, refused with 429.
--   after the statement (private.after_sign_up):
--     5. a held-back duplicate answered (23505);
--     6. a stored sign-up counted in its client's sources, each under its row's lock: past a
--        ceiling refused with 429 (everything rolls back), past a pace stored and marked.
--
-- What is counted where depends on whether it outlives the request:
--   - A stored sign-up commits, so its counts live in rows (private.sign_up_sources), one per
--     client and scope, exactly, written with the sign-up: a new sign-up is judged by its own
--     client's counts alone, whatever anyone else sends. Every limit, pace and ceiling, is a
--     bucket there.
--   - A failure the rules decide in steps 1 to 3 (a second row, a row the checks refuse, a
--     duplicate, an upsert of a listed address, a missing address) stores nothing, and anything
--     it wrote rolls back. So it is charged before the rules raise, where no rollback reaches: a
--     sketch of sequences per ceiling (private.charge_failure), whose nextval and setval outlive
--     the transaction. Past a ceiling there, the failure meets 429 instead of its own answer:
--     asking whether an address is on the list costs what signing up costs. The sketch's cells
--     are shared by clients: a stranger's own failure may meet 429 where attackers fill its cells;
--     its new sign-ups never read them.
--   - A refusal (429) charges nothing: a flood of refusals keeps its client full but no fuller.
--   - What PostgreSQL refuses before or after the rules is counted nowhere: a column the key may
--     not write and a body it cannot parse fail before any row reaches the rules; a cast in
--     PostgREST's `select` fails after the insert, before the statement's end, so the sign-up it
--     rolls back was never counted (step 6 runs at the statement's end). Each costs at most what
--     a refusal costs, stores nothing and names nothing but the list (supabase/README.md).
--
-- Time is milliseconds since 1970 everywhere (private.sign_up_clock), and every limit is the same
-- leaky bucket (GCRA) with the same test (private.past_full): one number per limit and client,
-- the instant its bucket is empty again. The steps read the limits as made for them, each scope's
-- buckets in one row (private.sign_up_buckets) and each ceiling's sketch in another
-- (private.failure_sketches).
--
-- Row locks, in the one order every request takes them, so that no two requests wait for each
-- other in a circle (a deadlock, which PostgREST answers with 500): the address's source row,
-- then its network shard's, both in step 6, until the transaction ends. The failures' cells take
-- none: a sequence's nextval waits for no one. State passes between the steps in transaction-local
-- settings, which nothing a client sends can set: `early_access.admitted_sign_up` (the row the
-- request may add and read back, 10_early_access.sql's policies), `early_access.sources` (the
-- sources step 4 found, for step 6 to count in) and `early_access.failure` (a failure charged, and
-- whether it is a duplicate held back).
--
-- Plans last a connection's life (PL/pgSQL keeps them, PostgREST keeps its connections), and one
-- made while the list or the sources were nearly empty scans them whole, at every sign-up, as they
-- grow. So each statement that reads them either goes through a unique index by its nature (the
-- count's upsert) or runs in a function of its own with `enable_seqscan` off, which looks them up
-- by key and runs nothing else: a statement with no index to take instead would be estimated past
-- the cost at which PostgreSQL compiles it (JIT). Every routine is PL/pgSQL: its plans last the
-- session, where PostgreSQL 17 plans an SQL function's body again in every statement that calls it.

-- What the steps pass on (declared first: the triggers' variables are of these types) -----------

-- A limit as the steps read it (made by private.bucket_of): its kind and name, its bucket in
-- milliseconds (the window, and what one sign-up adds in one shard of its scope), and its key in
-- a source's buckets, `kind name`.
create type private.sign_up_limit as (kind text, name text, max_sign_ups integer, window_ms bigint, cost_ms bigint, key text);

-- One source of a sign-up: its scope, its key (a keyed hash of the client in the scope, and of
-- its shard for a scope of several), its scope's limits, and their buckets (limit's key → the
-- instant it is empty again; null for a source never seen, or not read). A state always travels
-- with its limits, so no step can read one scope's state with the other's.
create type private.sign_up_source as (scope text, source_key bytea, limits private.sign_up_limit[], empty_at jsonb);

-- The triggers ----------------------------------------------------------------------------------

-- Before each row a request writes (an insert, or the owner's update): normalised and checked for
-- everyone; for the public key's roles, steps 1 to 4 above. What it decided, it says in the
-- settings: the row admitted (its id) and its sources, or a failure charged (`charged`, or
-- `duplicate` for one held back). A failure is charged before it is refused, so that past a
-- ceiling it meets 429. One plan for all (force_generic_plan), not one per client.
create function private.before_sign_up()
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

create trigger early_access_before_write
  before insert or update on public.early_access
  for each row execute function private.before_sign_up();

-- After every insert statement, once PostgREST's `select` has read the row back: steps 5 and 6
-- for a visitor's. A cast in that `select` that fails has failed the statement by now, so what it
-- rolls back was never counted. It tells a visitor's statement by the settings itself: a `when`
-- clause would cost every statement more than the call (its condition is built anew each time).
create function private.after_sign_up()
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

create trigger early_access_after_insert
  after insert on public.early_access
  for each statement execute function private.after_sign_up();

-- Steps 1 to 3: a failure charged ---------------------------------------------------------------

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

-- Each ceiling counts a client's failures as a leaky bucket too, kept in a count-min sketch
-- (private.failure_sketches): its scope's `sketch_rows` rows of `sketch_width` cells, each cell a
-- sequence. A client counts in one cell of each row, its column there taken from its key, the same
-- in every ceiling of its scope. A cell's value is its bucket's instant of being empty again; its
-- increment is the cost of one failure, so nextval charges a failure at once, atomically, and
-- waits for no lock. A cell counts everyone in it, so it never undercounts: a client's count is
-- its least-held cell, and strangers sharing a cell only raise it. Nobody rides free behind a
-- stranger; the price is that a stranger's own failure meets 429 where every one of its cells is
-- full (the odds are in 20_sign_up_limits.sql).
--
-- Charges a failure of the request's client to its ceilings, before the rules raise it: each
-- ceiling in order (failure_sketches), the address's first, then the network's, each the hour's
-- before the day's, up to the first the client is past, which refuses it (429, naming it, with
-- Retry-After the seconds until one more fits) in place of the failure's own answer: each ceiling
-- counts what the ones before let through, so an address failing past its own ceiling fills
-- neither its day's nor its network's (its neighbours keep their room).
--   - Charge first: nextval, in the client's cell of every row. Then the clock, so that no wait
--     comes between the instant and the count it judges.
--   - A cell that had drained (empty before this failure) is lifted to now plus this failure.
--     Racy only on an idle cell: failures charged to it between the first one's nextval and the
--     last lift are lost, at most as many as run at once (the API's connections), once per idle
--     spell, as a busy cell is never lifted.
--   - The client is past the ceiling when even its least-held cell is past full.
--   - A cell past full gives this failure back and is capped at full: a flood of refusals keeps
--     its cells full but no fuller, so a stranger sharing one waits for one failure to drain, not
--     for days, and the flood itself gets one more each time one drains, as a bucket does. (The
--     setval races as the lift does: a failure charged in between is lost, or a refusal kept.)
-- Each cell is read from its ceiling's row in place, in PL/pgSQL's own expressions: copied into a
-- variable, the whole array would be taken apart for the few cells used.
create function private.charge_failure(client text)
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

-- The client in each scope, named (private.client_named): what a failure's cells are picked by,
-- and a source's key is hashed from.
create function private.clients_of(client text)
returns table (scope text, named bytea)
language plpgsql stable set search_path = '' as $$
begin
  return query
    select s.name, private.client_named(c.secret, s.name, private.client_in_scope(client, s.ipv4_prefix, s.ipv6_prefix))
      from private.sign_up_scopes s, private.client_key_secret c;
end;
$$;

-- The key of the clients' hashes: random, made once per database, never leaves it.
create table private.client_key_secret (only_row boolean primary key default true check (only_row), secret bytea not null);
insert into private.client_key_secret (secret)
select decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');
analyze private.client_key_secret;

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

-- A client in a scope, named under the database's key: the key, then the scope's name and the
-- client in it (`network:192.0.2.0`), so no two scopes share one.
create function private.client_named(secret bytea, scope text, client_in_scope text)
returns bytea language plpgsql immutable set search_path = '' as $$
begin
  return secret || convert_to(scope || ':' || client_in_scope, 'UTF8');
end;
$$;

-- A client's column in each row of a sketch: 4 bytes of its key a row, so that the rows are
-- independent hashes (each a big-endian 32-bit number, modulo the width).
create function private.sketch_columns(client_key bytea, sketch_rows integer, width integer)
returns integer[] language plpgsql immutable set search_path = '' as $$
declare
  columns integer[] := '{}';
begin
  for r in 0 .. sketch_rows - 1 loop
    columns := columns || ((pg_catalog.get_byte(client_key, 4 * r)::bigint << 24 | pg_catalog.get_byte(client_key, 4 * r + 1) << 16
                            | pg_catalog.get_byte(client_key, 4 * r + 2) << 8 | pg_catalog.get_byte(client_key, 4 * r + 3)) % width)::integer;
  end loop;
  return columns;
end;
$$;

-- The instant the rules judge a request at, in milliseconds since 1970: the clock when the rule
-- runs, not when its transaction began (one that waited behind a later one would otherwise look
-- as if it came first). Read through this function alone, so that a test can set it: the tests
-- replace it in a database of their own. The public roles can neither call nor replace it.
create function private.sign_up_clock()
returns bigint language plpgsql volatile set search_path = '' as $$
begin
  return (extract(epoch from pg_catalog.clock_timestamp()) * 1000)::bigint;
end;
$$;

-- The one test of every bucket: how many milliseconds a bucket that is empty again at `empty_at`
-- holds past full at `at`. Past its limit when positive, and then how long until it has room for
-- one more. Full is its window, and half a millisecond per sign-up it holds for each sign-up's
-- rounding.
create function private.past_full(empty_at bigint, at bigint, bucket private.sign_up_limit)
returns bigint language plpgsql immutable set search_path = '' as $$
begin
  return empty_at - at - bucket.window_ms - bucket.max_sign_ups / 2;
end;
$$;

-- Refuses a request with 429 (PostgREST's convention for choosing the HTTP answer), naming the
-- ceiling it is past, with Retry-After the seconds until one more would fit.
create function private.refuse(ceiling private.sign_up_limit, retry_after_ms bigint)
returns void language plpgsql volatile set search_path = '' as $$
begin
  raise sqlstate 'PGRST' using
    message = json_build_object('code', 'PT429', 'message', 'Too many sign-ups from this address',
      'details', format('At most %s sign-ups %s.', ceiling.max_sign_ups, ceiling.name), 'hint', 'Try again later.')::text,
    detail = json_build_object('status', 429, 'headers',
      json_build_object('Retry-After', greatest(1, ceil(retry_after_ms / 1000.0))::text))::text;
end;
$$;

-- Whether the list holds an address (step 3), and a sign-up (step 6: stored, not skipped).
create function private.listed(email text)
returns boolean language plpgsql stable set search_path = '' set enable_seqscan = off as $$
begin
  return exists (select from public.early_access e where e.email = listed.email);
end;
$$;

-- Step 4: a new sign-up judged on a plain read -------------------------------------------------

-- The sources the sign-up `sign_up_id` from `client` counts in, one per scope that has limits, in
-- the scopes' order (by name: the address's, then the network's, the lock order), with their
-- limits and their buckets as stored now (null for a source never seen), read without a lock:
-- what a refusal is decided on, before any row is written or any lock waited for. A source's key
-- is the SHA-256 of the client in its scope, named as a failure's cells are picked
-- (private.clients_of) and, for a scope of several shards, of the shard the sign-up counts in
-- (`network:192.0.2.0#3`), picked by the sign-up's own random id. A sign-up in a shard costs
-- `shards` times a sign-up's share, so that a shard's bucket holds its share of the limit. Every
-- table is read through its key's index (the scopes' in order, so that nothing is sorted).
create function private.sources_of(client text, sign_up_id uuid)
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

-- Each source's buckets (a client in one scope and shard, as a keyed hash, never its address):
-- per limit of its scope, by the limit's key, the instant its bucket is empty again ("theoretical
-- arrival time"): a few numbers, whatever the limits' sizes. Unlogged: a crash empties it,
-- forgetting at most a day of counts; no WAL for it.
create unlogged table private.sign_up_sources (source_key bytea primary key, empty_at jsonb not null);
comment on table private.sign_up_sources is
  'Per source (a keyed hash of the client, never its address), when each limit''s bucket is empty again.';

-- A source's buckets with one more sign-up at `at`: each drained up to `at` if it emptied before,
-- then filled by one sign-up. A source never seen starts empty.
create function private.filled(empty_at jsonb, limits private.sign_up_limit[], at bigint)
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

-- Refuses (429) a source whose buckets, counted with a sign-up at `at`, are past a ceiling: the
-- first of its scope's, the shortest window first, until it has room for one more.
create function private.within_ceilings(limits private.sign_up_limit[], empty_at jsonb, at bigint)
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

-- Step 6: a stored sign-up counted --------------------------------------------------------------

create function private.stored(sign_up_id uuid)
returns boolean language plpgsql stable set search_path = '' set enable_seqscan = off as $$
begin
  return exists (select from public.early_access e where e.id = sign_up_id);
end;
$$;

-- A scope's limits (step 4 passes on only its sources' scopes and keys: a setting holds text, and
-- the whole array read back from it would cost more than this look-up).
create function private.limits_of(scope text)
returns private.sign_up_limit[] language plpgsql stable set search_path = '' as $$
begin
  return (select b.limits from private.sign_up_buckets b where b.scope = limits_of.scope);
end;
$$;

-- Counts a stored sign-up at `at` in its source, in one statement under the source's row lock,
-- so that concurrent sign-ups of one source take turns, each counted on what the one before left:
-- a source never seen is added, else its buckets filled. Returns its buckets with the sign-up, and
-- whether it added the source (its first: a row just inserted has no xmax, one updated by the
-- upsert carries its lock's). The unique index finds the row, so no plan ever scans the table.
create function private.count_sign_up(source private.sign_up_source, at bigint, out empty_at jsonb, out added boolean)
language plpgsql volatile set search_path = '' set plan_cache_mode = force_generic_plan as $$
begin
  insert into private.sign_up_sources as s (source_key, empty_at)
  values (source.source_key, private.filled(null, source.limits, at))
  on conflict (source_key) do update set empty_at = private.filled(s.empty_at, source.limits, at)
  returning s.empty_at, s.xmax = 0 into empty_at, added;
end;
$$;

-- The paces a source's buckets, counted with a sign-up at `at`, are past, in words: about how
-- many the bucket holds (a shard's count times the shards: an estimate of the whole), and the pace.
create function private.paces_past(limits private.sign_up_limit[], empty_at jsonb, at bigint)
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

-- Forgets the sources that follow `after` in key order, at most `batch`, whose buckets are all
-- empty at `at` (such a state says no more than none): rows picked at random, as keys are hashes,
-- and locked only if no other request holds them. One plan for all, and never a scan.
create function private.forget_empty_sources(after bytea, batch integer, at bigint)
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

-- Nobody but the owner reaches the rules: not the API roles, and not PUBLIC, which may execute
-- every new function by default.
revoke all on table private.client_key_secret, private.sign_up_sources from public, anon, authenticated, service_role;
revoke all on type private.sign_up_limit, private.sign_up_source from public, anon, authenticated, service_role;
revoke all on function private.before_sign_up(), private.after_sign_up(), private.client_address(),
  private.charge_failure(text), private.clients_of(text), private.client_in_scope(text, integer, integer),
  private.client_named(bytea, text, text), private.sketch_columns(bytea, integer, integer), private.sign_up_clock(),
  private.past_full(bigint, bigint, private.sign_up_limit), private.refuse(private.sign_up_limit, bigint),
  private.listed(text), private.sources_of(text, uuid),
  private.filled(jsonb, private.sign_up_limit[], bigint), private.within_ceilings(private.sign_up_limit[], jsonb, bigint),
  private.stored(uuid), private.limits_of(text), private.count_sign_up(private.sign_up_source, bigint),
  private.paces_past(private.sign_up_limit[], jsonb, bigint), private.forget_empty_sources(bytea, integer, bigint)
  from public, anon, authenticated, service_role;
