-- A refusal's Retry-After is the time until its bucket has room for one more, no longer: the
-- rules refuse a bucket past its window plus half a millisecond per sign-up (rounding's slack,
-- private.bucket_past), and Retry-After left that slack out, so a bucket filled into it named up
-- to a second more than its drip. As in supabase/schemas/25_sign_up_rules.sql.

create or replace function private.within_ceilings(source private.sign_up_source, at bigint)
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
