-- What changes the limits: the limits and scopes of 20_sign_up_limits.sql made into what the steps
-- of 25_sign_up_rules.sql read (each scope's buckets, each ceiling's failures' sketch), the
-- procedure that makes them follow a change, and the check at commit that it ran. No request ever
-- runs any of it.

-- The one place a limit becomes a bucket, in a scope of `shards` shards: its window in
-- milliseconds, what one sign-up adds to its shard's bucket (the window over max_sign_ups, times
-- the shards, rounded to the millisecond, so that each shard holds its share of the limit), and its
-- key, `kind name`. The sign-ups' (private.sign_up_buckets) and the failures' (one shard).
create function private.bucket_of(l private.sign_up_limits, shards integer)
returns private.sign_up_limit language plpgsql immutable set search_path = '' as $$
declare
  window_ms bigint := (extract(epoch from l.window_length) * 1000)::bigint;
begin
  return row(l.kind, l.name, l.max_sign_ups, window_ms, round(window_ms * shards / l.max_sign_ups::numeric),
             l.kind || ' ' || l.name)::private.sign_up_limit;
end;
$$;

-- Each scope's limits as a sign-up's steps read them, one row per scope: what one client is (its
-- prefixes), its shards, and its limits as buckets, ordered as the steps judge them (ceilings
-- first, the shortest window first), so that a sign-up reads one small row rather than joining and
-- converting the limits' tables.
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

-- The failures' sketch of each ceiling, as the charge reads it, one row each, so that a failure
-- reads one small table in order rather than joining the limits and naming its cells: the sketch
-- and the bucket its cells were made for, its cells row after row (row r, column c at
-- r * width + c + 1), and, while it is a limit, its place in the charge's order. A ceiling that is
-- removed keeps its cells, unused, until it is added again; its place is null.
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
-- does not is refused at its commit (private.check_limits_applied).
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

revoke all on table private.sign_up_buckets, private.failure_sketches from public, anon, authenticated, service_role;
revoke all on function private.bucket_of(private.sign_up_limits, integer), private.wanted_sign_up_buckets(),
  private.failure_cell(text, integer, integer), private.wanted_failure_sketches(), private.check_limits_applied()
  from public, anon, authenticated, service_role;
revoke all on procedure private.apply_sign_up_limits() from public, anon, authenticated, service_role;
