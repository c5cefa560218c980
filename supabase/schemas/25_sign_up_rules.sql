-- The sign-up rules: how the limits of 20_sign_up_limits.sql are kept. Supabase does not
-- rate-limit its REST API, so the database does. This is the whole design; the READMEs link here.
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
-- leaky bucket (GCRA) with the same test (private.bucket_past): one number per limit and client,
-- the instant its bucket is empty again. The steps read the limits as made for them, each scope's
-- buckets in one row (private.sign_up_buckets) and each ceiling's sketch in another
-- (private.failure_sketches), both made from 20_sign_up_limits.sql's tables by
-- private.apply_sign_up_limits(), which every migration that changes those tables ends with.
--
-- Row locks, in the one order every request takes them, so that no two requests wait for each
-- other in a circle (a deadlock, which PostgREST answers with 500): the address's source row,
-- then its network shard's, both in step 6, until the transaction ends. The failures' cells take
-- none: a sequence's nextval waits for no one. State passes between the steps in two
-- transaction-local settings, which nothing a client sends can set: `early_access.admitted_sign_up`
-- (the row the request may add and read back, 10_early_access.sql's policies) and
-- `early_access.failure` (a failure charged, and whether it is a duplicate held back).
--
-- Plans last a connection's life (PL/pgSQL keeps them, PostgREST keeps its connections), and one
-- made while the list or the sources were nearly empty scans them whole, at every sign-up, as they
-- grow. So each statement that reads them runs in a function of its own with `enable_seqscan`
-- off, which looks them up by key and runs nothing else (private.listed, private.stored,
-- private.read_source, private.count_sign_up, private.forget_empty_sources, and
-- private.record_mark, whose mark is checked against the list): a statement with no index to take
-- instead would be estimated past the cost at which PostgreSQL compiles it (JIT).

-- The key of the clients' hashes: random, made once per database, never leaves it.
create table private.client_key_secret (only_row boolean primary key default true check (only_row), secret bytea not null);
insert into private.client_key_secret (secret)
select decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');
analyze private.client_key_secret;

-- A limit as the steps read it: its kind and name, and its bucket in milliseconds (the window, and
-- what one sign-up adds in one shard of its scope).
create type private.sign_up_limit as (kind text, name text, max_sign_ups integer, window_ms bigint, cost_ms bigint);

-- A limit of 20_sign_up_limits.sql as the steps read it, in a scope of `shards` shards: its window
-- in milliseconds, and what one sign-up adds to its shard's bucket (the window over max_sign_ups,
-- times the shards, rounded to the millisecond), so that each shard holds its share of the limit.
-- The one place a limit becomes a bucket: the sign-ups' (private.sign_up_buckets) and the
-- failures' (private.failure_sketches, one shard).
create function private.bucket_of(l private.sign_up_limits, shards integer)
returns private.sign_up_limit language plpgsql immutable set search_path = '' as $$
declare
  window_ms bigint := (extract(epoch from l.window_length) * 1000)::bigint;
begin
  return row(l.kind, l.name, l.max_sign_ups, window_ms, round(window_ms * shards / l.max_sign_ups::numeric))::private.sign_up_limit;
end;
$$;

-- One source of a sign-up, as the steps pass it on: its scope, its key (a keyed hash of the
-- client in the scope, and of its shard for a scope of several), its scope's limits, and their
-- buckets (`kind name` → the instant each is empty again; null for a source never seen). A state
-- always travels with its limits, so no step can read one scope's state with the other's.
create type private.sign_up_source as (scope text, source_key bytea, limits private.sign_up_limit[], empty_at jsonb);

-- The steps' parts -----------------------------------------------------------------------------
-- PL/pgSQL, each: its plans last the session, where PostgreSQL 17 plans an SQL function's body
-- again in every statement that calls it.

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

-- Whether a bucket that is empty again at `empty_at` holds more than its limit at `at`: more than
-- its window, and half a millisecond per sign-up it holds for each sign-up's rounding.
create function private.bucket_past(empty_at bigint, at bigint, bucket private.sign_up_limit)
returns boolean language plpgsql immutable set search_path = '' as $$
begin
  return empty_at - at > bucket.window_ms + bucket.max_sign_ups / 2;
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

-- A client in a scope, named under the database's key: the key, then the scope's name and the
-- client in it (`network:192.0.2.0`), so no two scopes share one. Its SHA-256 picks the client's
-- cells in the scope's failure sketches; its sources' keys are hashes of the same.
create function private.client_named(secret bytea, scope text, client_in_scope text)
returns bytea language plpgsql immutable set search_path = '' as $$
begin
  return secret || convert_to(scope || ':' || client_in_scope, 'UTF8');
end;
$$;

-- The client in each scope, named (private.client_named).
create function private.clients_of(client text)
returns table (scope text, named bytea)
language plpgsql stable set search_path = '' as $$
begin
  return query
    select s.name, private.client_named(c.secret, s.name, private.client_in_scope(client, s.ipv4_prefix, s.ipv6_prefix))
      from private.sign_up_scopes s, private.client_key_secret c;
end;
$$;

-- Each scope's limits as a sign-up's steps read them, one row per scope: what one client is (its
-- prefixes), its shards, and its limits, each as a bucket in milliseconds that one sign-up in one
-- shard fills by its share, ordered as the steps judge them (ceilings first, the shortest window
-- first). Made from the limits' tables by private.apply_sign_up_limits, so that a sign-up reads
-- one small row rather than joining and converting them twice.
create table private.sign_up_buckets (
  scope text primary key,
  ipv4_prefix integer not null,
  ipv6_prefix integer not null,
  shards integer not null,
  limits private.sign_up_limit[] not null
);
comment on table private.sign_up_buckets is
  'Each scope''s limits as a sign-up reads them: its prefixes, shards and buckets in milliseconds, made by private.apply_sign_up_limits().';

-- What private.sign_up_buckets holds when it follows the limits' tables.
create function private.wanted_sign_up_buckets()
returns table (scope text, ipv4_prefix integer, ipv6_prefix integer, shards integer, limits private.sign_up_limit[])
language plpgsql stable set search_path = '' as $$
begin
  return query
    select s.name, s.ipv4_prefix, s.ipv6_prefix, s.shards,
           array(select private.bucket_of(l, s.shards) from private.sign_up_limits l
                  where l.per = s.name order by l.kind, l.window_length)
      from private.sign_up_scopes s;
end;
$$;

-- The sources the sign-up `sign_up_id` from `client` counts in, one per scope (else null), with
-- their scope's limits and no state yet. A source's key is the SHA-256 of the client in its scope
-- (private.client_named), and, for a scope of several shards, of the shard the sign-up counts in
-- (`network:192.0.2.0#3`), picked by the sign-up's own random id, so that every step of one
-- sign-up finds the same. A sign-up in a shard costs `shards` times a sign-up's share, so that a
-- shard's bucket holds its share of the limit (private.sign_up_buckets).
create function private.sources_of(client text, sign_up_id uuid, out address private.sign_up_source,
                                   out network private.sign_up_source)
language plpgsql stable set search_path = '' as $$
declare
  scope record;
  source private.sign_up_source;
begin
  for scope in
    select b.scope, b.ipv4_prefix, b.ipv6_prefix, b.shards, b.limits, c.secret
      from private.sign_up_buckets b, private.client_key_secret c
     where cardinality(b.limits) > 0
  loop
    source := row(scope.scope,
                  pg_catalog.sha256(private.client_named(scope.secret, scope.scope,
                                                         private.client_in_scope(client, scope.ipv4_prefix, scope.ipv6_prefix))
                                    || convert_to(case when scope.shards > 1
                                                    then '#' || pg_catalog.get_byte(pg_catalog.uuid_send(sign_up_id), 15) % scope.shards
                                                    else '' end, 'UTF8')),
                  scope.limits, null);
    if scope.scope = 'address' then address := source; else network := source; end if;
  end loop;
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

-- Sign-ups: a source's buckets ---------------------------------------------------------------

-- Each source's buckets (a client in one scope and shard, as a keyed hash, never its address):
-- per limit of its scope, keyed `kind name`, the instant its bucket is empty again ("theoretical
-- arrival time"): a few numbers, whatever the limits' sizes. Unlogged: a crash empties it,
-- forgetting at most a day of counts; no WAL for it.
create unlogged table private.sign_up_sources (source_key bytea primary key, empty_at jsonb not null);
comment on table private.sign_up_sources is
  'Per source (a keyed hash of the client, never its address), when each limit''s bucket is empty again.';

-- The source with one more sign-up at `at`: each bucket drained up to `at` if it emptied before,
-- then filled by one sign-up. A source never seen starts empty.
create function private.with_sign_up(source private.sign_up_source, at bigint)
returns private.sign_up_source language plpgsql immutable set search_path = '' as $$
declare
  bucket private.sign_up_limit;
  counted jsonb := coalesce(source.empty_at, '{}');
begin
  if source is null then return null; end if;
  foreach bucket in array source.limits loop
    counted := counted || pg_catalog.jsonb_build_object(bucket.kind || ' ' || bucket.name,
                 greatest((counted ->> (bucket.kind || ' ' || bucket.name))::bigint, at) + bucket.cost_ms);
  end loop;
  source.empty_at := counted;
  return source;
end;
$$;

-- The source, counted with a sign-up at `at`: refused (429) past a ceiling, the first of its
-- scope's, the shortest window first.
create function private.within_ceilings(source private.sign_up_source, at bigint)
returns private.sign_up_source language plpgsql volatile set search_path = '' as $$
declare
  bucket private.sign_up_limit;
  empty_at bigint;
begin
  if source is null then return null; end if;
  foreach bucket in array source.limits loop
    empty_at := (source.empty_at ->> (bucket.kind || ' ' || bucket.name))::bigint;
    if bucket.kind = 'ceiling' and private.bucket_past(empty_at, at, bucket) then
      -- Until the bucket, without this sign-up, has room for one more: as long as what it holds
      -- past its limit (private.bucket_past) takes to drain.
      perform private.refuse(bucket, empty_at - at - bucket.window_ms - bucket.max_sign_ups / 2);
    end if;
  end loop;
  return source;
end;
$$;

-- The paces a source, counted with a sign-up at `at`, is past, in words: about how many its bucket
-- holds (a shard's count times the shards: an estimate of the whole), and the pace. Null for none.
create function private.paces_past(source private.sign_up_source, at bigint)
returns text language plpgsql immutable set search_path = '' as $$
declare
  bucket private.sign_up_limit;
  empty_at bigint;
  reasons text[] := '{}';
begin
  if source is null then return null; end if;
  foreach bucket in array source.limits loop
    empty_at := (source.empty_at ->> (bucket.kind || ' ' || bucket.name))::bigint;
    if bucket.kind = 'pace' and private.bucket_past(empty_at, at, bucket) then
      reasons := reasons || format('about %s sign-ups %s (pace: %s)',
                                   round((empty_at - at)::numeric / bucket.window_ms * bucket.max_sign_ups), bucket.name, bucket.max_sign_ups);
    end if;
  end loop;
  return nullif(array_to_string(reasons, '; '), '');
end;
$$;

-- The source as stored now, read without a lock: what a refusal is decided on, before any row is
-- written or any lock waited for.
create function private.read_source(source private.sign_up_source)
returns private.sign_up_source language plpgsql stable set search_path = '' set enable_seqscan = off as $$
begin
  if source.source_key is not null then
    source.empty_at := (select s.empty_at from private.sign_up_sources s where s.source_key = source.source_key);
  end if;
  return source;
end;
$$;

-- Counts a stored sign-up at `at` in its source, under the source's row lock, so that concurrent
-- sign-ups of one source take turns, each judged at the instant it holds the lock: refused past a
-- ceiling (nothing written), else written. Returns the source with the sign-up counted, and
-- whether it added the source (its first).
create function private.count_sign_up(source private.sign_up_source, at bigint, out counted private.sign_up_source,
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

-- Failures: a sketch of sequences per ceiling ---------------------------------------------------
-- Each ceiling counts a client's failures as a leaky bucket too, kept in a count-min sketch: its
-- scope's `sketch_rows` rows of `sketch_width` cells, each cell a sequence. A client counts in one
-- cell of each row, its column there taken from its key, the same in every ceiling of its scope.
-- A cell's value is its bucket's instant of being empty again; its increment is the cost of one
-- failure (the window over max_sign_ups, rounded to the millisecond), so nextval charges a failure
-- at once, atomically, and waits for no lock. A cell counts everyone in it, so it never
-- undercounts: a client's count is its least-held cell, and strangers sharing a cell only raise
-- it. Nobody rides free behind a stranger; the price is that a stranger's own failure meets 429
-- where every one of its cells is full (the odds are in 20_sign_up_limits.sql).

-- The failures' sketch of each ceiling, as the charge reads it, one row each, so that a failure
-- reads one small table in order rather than joining the limits and naming its cells: the sketch
-- and the bucket its cells were made for, its cells row after row (row r, column c at
-- r * width + c + 1), and, while it is a limit, its place in the charge's order. A ceiling that is
-- removed keeps its cells, unused, until it is added again; its place is null. All kept by
-- private.apply_sign_up_limits.
create table private.failure_sketches (
  name text primary key,
  sketch_rows integer not null,
  sketch_width integer not null,
  bucket private.sign_up_limit not null,
  cells regclass[] not null,
  per text,
  charge_order integer
);
comment on table private.failure_sketches is
  'Each ceiling''s sketch of failures as the charge reads it: rows x width cells (sequences, row after row), the bucket they were made for, its scope and its place in the order ceilings are charged (null once removed).';
-- Its cells stay in the row rather than in a TOAST table: every failure reads them, and each
-- relation a request touches costs it a lock and a lookup, here two (the TOAST table and its index).
alter table private.failure_sketches alter column cells set storage main;

-- The name of a ceiling's cell: `private."ceiling per address per hour r0 c17"`, row 0, column 17.
create function private.failure_cell(ceiling text, sketch_row integer, sketch_column integer)
returns text language plpgsql immutable set search_path = '' as $$
begin
  return format('private.%I', format('ceiling %s r%s c%s', ceiling, sketch_row, sketch_column));
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

-- Each ceiling's failures' sketch as the limits and scopes want it: its scope, the scope's sketch,
-- the ceiling's bucket in one shard (what one failure costs: a cell's increment),
-- and its place in the charge's order, the address's ceilings first, then the network's, each
-- the shortest window first (private.charge_failure says why).
create function private.wanted_failure_sketches()
returns table (name text, per text, sketch_rows integer, sketch_width integer, bucket private.sign_up_limit,
               charge_order integer)
language plpgsql stable set search_path = '' as $$
begin
  return query
    select l.name, l.per, s.sketch_rows, s.sketch_width, private.bucket_of(l, 1),
           (row_number() over (order by l.per = 'network', l.window_length, l.name))::integer
      from private.sign_up_limits l
      join private.sign_up_scopes s on s.name = l.per
     where l.kind = 'ceiling';
end;
$$;

-- Makes what the rules read of the limits and scopes follow them, in one transaction: each scope's
-- buckets (private.sign_up_buckets, rewritten whole), and each ceiling's cells as
-- private.wanted_failure_sketches says: of a resized sketch, a cell whose name still fits is kept,
-- the surplus dropped and the missing made; the kept are emptied if the width changed (their
-- columns now hold other clients), and take the new cost if it changed. A migration that changes
-- a limit or a scope calls it (as this file does right below): a transaction that changes them and
-- does not is refused at its commit (private.check_limits_applied). No request ever makes a cell.
--
-- Each cell made, dropped or altered holds a lock until the transaction ends, in the server's
-- shared lock table, which PostgreSQL sizes by its connections: a 20-connection server's holds
-- about 4,000, and past them the transaction fails ("out of shared memory"). So a change of more
-- than 3,000 cells is refused, leaving room for the requests that run meanwhile: make it in steps,
-- a migration each (tests/database/ceilings.test.ts makes the largest on such a server).
create procedure private.apply_sign_up_limits()
language plpgsql set search_path = '' as $$
declare
  most_at_once constant integer := 3000;
  changes integer;
  ceiling record;
  statement text;
begin
  create temporary table changed_sketches on commit drop as
    select w.*, coalesce(f.sketch_rows, 0) as made_rows, coalesce(f.sketch_width, 0) as made_width,
           (f.bucket).cost_ms as made_cost_ms
      from private.wanted_failure_sketches() w left join private.failure_sketches f on f.name = w.name;
  -- A cell's name holds its ceiling's, within PostgreSQL's 63 bytes a name.
  if exists (select from pg_temp.changed_sketches c where octet_length(c.name) > 40) then
    raise exception 'A ceiling''s name is at most 40 bytes: its cells are named after it';
  end if;
  -- Cells made or dropped, and kept cells altered (emptied, or given a new cost).
  select coalesce(sum(c.sketch_rows * c.sketch_width + c.made_rows * c.made_width - 2 * kept.cells
                      + case when c.made_width <> c.sketch_width or c.made_cost_ms <> (c.bucket).cost_ms then kept.cells else 0 end), 0)
    into changes
    from pg_temp.changed_sketches c
   cross join lateral (select least(c.sketch_rows, c.made_rows) * least(c.sketch_width, c.made_width) as cells) kept;
  if changes > most_at_once then
    raise exception 'This change of the failures'' sketches makes, drops or alters % cells in one transaction, more than %', changes, most_at_once
      using hint = 'A 20-connection server cannot lock that many at once: change the sizes in steps of at most 3,000 cells, a migration each.';
  end if;
  for ceiling in select * from pg_temp.changed_sketches loop
    -- The surplus dropped, the kept altered, the missing made (and no API role granted any).
    foreach statement in array array[
      (select 'drop sequence ' || string_agg(private.failure_cell(ceiling.name, r, col), ', ')
         from generate_series(0, ceiling.made_rows - 1) r, generate_series(0, ceiling.made_width - 1) col
        where r >= ceiling.sketch_rows or col >= ceiling.sketch_width),
      (select string_agg(format('alter sequence %s increment by %s%s', private.failure_cell(ceiling.name, r, col),
                                (ceiling.bucket).cost_ms,
                                case when ceiling.made_width <> ceiling.sketch_width then ' restart with 0' else '' end), '; ')
         from generate_series(0, least(ceiling.made_rows, ceiling.sketch_rows) - 1) r,
              generate_series(0, least(ceiling.made_width, ceiling.sketch_width) - 1) col
        where ceiling.made_width <> ceiling.sketch_width or ceiling.made_cost_ms <> (ceiling.bucket).cost_ms),
      (select string_agg(format('create sequence %s as bigint minvalue 0 increment by %s', cell, (ceiling.bucket).cost_ms), '; ')
              || '; revoke all on sequence ' || string_agg(cell, ', ') || ' from public, anon, authenticated, service_role'
         from generate_series(0, ceiling.sketch_rows - 1) r, generate_series(0, ceiling.sketch_width - 1) col,
              lateral (select private.failure_cell(ceiling.name, r, col) as cell) named
        where r >= ceiling.made_rows or col >= ceiling.made_width)]
    loop
      if statement is not null then
        execute statement;
      end if;
    end loop;
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
  drop table pg_temp.changed_sketches;
  analyze private.failure_sketches;
  -- Every scope's buckets.
  delete from private.sign_up_buckets;
  insert into private.sign_up_buckets select * from private.wanted_sign_up_buckets();
  analyze private.sign_up_buckets;
end;
$$;
call private.apply_sign_up_limits();

-- Refuses, at its commit, a transaction that changed the limits or the scopes and left what the
-- rules read of them (the scopes' buckets, the failures' sketches) as it was: it names the one call
-- that makes them follow.
create function private.check_limits_applied()
returns trigger language plpgsql set search_path = '' as $$
begin
  if exists (select w.name, w.per, w.sketch_rows, w.sketch_width, w.bucket, w.charge_order from private.wanted_failure_sketches() w
             except
             select f.name, f.per, f.sketch_rows, f.sketch_width, f.bucket, f.charge_order from private.failure_sketches f)
     or exists (select from private.failure_sketches f
                 where f.charge_order is not null and f.name not in (select w.name from private.wanted_failure_sketches() w))
     or exists ((select * from private.wanted_sign_up_buckets() except select * from private.sign_up_buckets)
                union all
                (select * from private.sign_up_buckets except select * from private.wanted_sign_up_buckets())) then
    raise exception 'This change of private.sign_up_limits or private.sign_up_scopes leaves what the rules read of them as it was: run "call private.apply_sign_up_limits();" after it, in the same transaction (the same migration)';
  end if;
  return null;
end;
$$;

create constraint trigger sign_up_limits_applied
  after insert or update or delete on private.sign_up_limits
  deferrable initially deferred
  for each row execute function private.check_limits_applied();
create constraint trigger sign_up_scopes_applied
  after update on private.sign_up_scopes
  deferrable initially deferred
  for each row execute function private.check_limits_applied();

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
--   - The client is past the ceiling when even its least-held cell is (private.bucket_past).
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
  full_at bigint;
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
    -- Where a full bucket's cell stands: past it, the cell holds more than the ceiling.
    full_at := at + (ceiling.bucket).window_ms + (ceiling.bucket).max_sign_ups / 2;
    -- The least-held cell as charged: a drained one is under full either way, so the lift
    -- changes no answer.
    least_held := null;
    for r in 1 .. ceiling.sketch_rows loop
      least_held := least(least_held, held[r]);
      if held[r] - (ceiling.bucket).cost_ms < at then
        held[r] := pg_catalog.setval(ceiling.cells[columns[r]], at + (ceiling.bucket).cost_ms);
      elsif held[r] > full_at then
        held[r] := pg_catalog.setval(ceiling.cells[columns[r]], least(held[r] - (ceiling.bucket).cost_ms, full_at));
      end if;
    end loop;
    if private.bucket_past(least_held, at, ceiling.bucket) then
      -- Until the least-held cell, capped at full, has room for one more: as long as what it holds
      -- past its limit (private.bucket_past) takes to drain, a failure's cost at most.
      perform private.refuse(ceiling.bucket, least(least_held - at - (ceiling.bucket).window_ms - (ceiling.bucket).max_sign_ups / 2,
                                                   (ceiling.bucket).cost_ms));
    end if;
  end loop;
end;
$$;

-- The triggers ----------------------------------------------------------------------------------

-- Whether the list holds an address (step 3), and a sign-up (step 6: stored, not skipped).
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

-- Before each row a request writes (an insert, or the owner's update): normalised and checked for
-- everyone; for the public key's roles, steps 1 to 4 above. What it decided, it says in the two
-- settings: the row admitted (its id), and a failure charged (`charged`, or `duplicate` for one
-- held back). A failure is charged before it is refused, so that past a ceiling it meets 429.
create function private.before_sign_up()
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

create trigger early_access_before_write
  before insert or update on public.early_access
  for each row execute function private.before_sign_up();

-- After a visitor's statement, once PostgREST's `select` has read the row back: steps 5 and 6.
-- A cast in that `select` that fails has failed the statement by now, so what it rolls back was
-- never counted. One plan for all (force_generic_plan), not one per client.
create function private.after_sign_up()
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

create trigger early_access_after_insert
  after insert on public.early_access
  for each statement
  when (current_setting('early_access.admitted_sign_up', true) <> '' or current_setting('early_access.failure', true) <> '')
  execute function private.after_sign_up();

-- Nobody but the owner reaches the rules: not the API roles, and not PUBLIC, which may execute
-- every new function by default.
revoke all on table private.client_key_secret, private.sign_up_buckets, private.sign_up_sources, private.failure_sketches
  from public, anon, authenticated, service_role;
revoke all on type private.sign_up_limit, private.sign_up_source from public, anon, authenticated, service_role;
revoke all on function private.sign_up_clock(), private.bucket_past(bigint, bigint, private.sign_up_limit),
  private.client_address(), private.client_in_scope(text, integer, integer), private.client_named(bytea, text, text),
  private.clients_of(text), private.bucket_of(private.sign_up_limits, integer), private.wanted_sign_up_buckets(),
  private.sources_of(text, uuid), private.refuse(private.sign_up_limit, bigint),
  private.with_sign_up(private.sign_up_source, bigint), private.within_ceilings(private.sign_up_source, bigint),
  private.paces_past(private.sign_up_source, bigint), private.read_source(private.sign_up_source),
  private.count_sign_up(private.sign_up_source, bigint), private.forget_empty_sources(bytea, integer, bigint),
  private.listed(text), private.stored(uuid),
  private.failure_cell(text, integer, integer), private.sketch_columns(bytea, integer, integer),
  private.wanted_failure_sketches(), private.check_limits_applied(), private.charge_failure(text),
  private.before_sign_up(), private.after_sign_up()
  from public, anon, authenticated, service_role;
revoke all on procedure private.apply_sign_up_limits() from public, anon, authenticated, service_role;
