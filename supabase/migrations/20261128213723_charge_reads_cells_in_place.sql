-- The charge reads each cell from its ceiling's row in place, rather than copying the row's array
-- into a variable (which took apart all of an address's thousand cells to use four), and the cells
-- stay in the row (storage main) rather than in a TOAST table, whose table and index were two more
-- relations for every request to lock and look up. As in supabase/schemas/25_sign_up_rules.sql.

alter table private.sign_up_ceilings alter column cells set storage main;
-- Rewritten, so that the arrays already stored out of line come back into their rows.
update private.sign_up_ceilings set cells = array(select unnest(cells));

create or replace function private.charge_request()
returns boolean language plpgsql security definer set search_path = '' set plan_cache_mode = force_generic_plan as $$
declare
  since_2026 constant float8 := 1767225600; -- 2026-01-01, in seconds since 1970
  scopes text[];
  named bytea[];
  ceiling record;
  columns integer[];
  held bigint[];
  least_held bigint;
  now_ms bigint;
  full_ms bigint;
  setting text;
begin
  if current_setting('early_access.charged', true) = 'yes' then
    return false;
  end if;
  select array_agg(n.scope), array_agg(n.named) into scopes, named from private.clients_of(private.client_address()) n;
  for ceiling in
    select c.name, c.per, c.max_sign_ups, c.window_ms, c.cost_ms, c.ceiling_rows, c.ceiling_width, c.cells
      from private.sign_up_ceilings c where c.charge_order is not null order by c.charge_order
  loop
    columns := private.ceiling_columns(pg_catalog.sha256(named[array_position(scopes, ceiling.per)]),
                                       ceiling.ceiling_rows, ceiling.ceiling_width);
    for r in 1 .. ceiling.ceiling_rows loop
      columns[r] := (r - 1) * ceiling.ceiling_width + columns[r] + 1; -- the cell's place in `cells`
      held[r] := pg_catalog.nextval(ceiling.cells[columns[r]]);
    end loop;
    now_ms := round((private.sign_up_clock() - since_2026) * 1000);
    full_ms := ceiling.window_ms + ceiling.max_sign_ups / 2;
    -- The least-held cell as charged: a drained one is under full either way, so the lift
    -- changes no answer.
    least_held := null;
    for r in 1 .. ceiling.ceiling_rows loop
      least_held := least(least_held, held[r]);
      if held[r] - ceiling.cost_ms < now_ms then
        held[r] := pg_catalog.setval(ceiling.cells[columns[r]], now_ms + ceiling.cost_ms);
      elsif held[r] - now_ms > full_ms then
        held[r] := pg_catalog.setval(ceiling.cells[columns[r]], least(held[r] - ceiling.cost_ms, now_ms + full_ms));
      end if;
    end loop;
    if least_held - now_ms > full_ms then
      -- Retry-After: until the least-held cell, capped at full, has room for one more.
      perform private.refuse(ceiling.max_sign_ups, ceiling.name,
                             greatest(1, ceil(least(least_held - now_ms - full_ms, ceiling.cost_ms) / 1000.0))::integer);
    end if;
  end loop;
  setting := set_config('early_access.charged', 'yes', true);
  return true;
end;
$$;
