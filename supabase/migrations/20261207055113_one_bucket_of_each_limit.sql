-- One place where a limit becomes a bucket, private.bucket_of, as in
-- supabase/schemas/25_sign_up_rules.sql: the scopes' buckets and the failures' sketches both read it,
-- where each converted the window to milliseconds and divided it on its own. What they make is
-- unchanged, so nothing needs applying again.

create function private.bucket_of(l private.sign_up_limits, shards integer)
returns private.sign_up_limit language plpgsql immutable set search_path = '' as $$
declare
  window_ms bigint := (extract(epoch from l.window_length) * 1000)::bigint;
begin
  return row(l.kind, l.name, l.max_sign_ups, window_ms, round(window_ms * shards / l.max_sign_ups::numeric))::private.sign_up_limit;
end;
$$;

create or replace function private.wanted_sign_up_buckets()
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

create or replace function private.wanted_failure_sketches()
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

revoke all on function private.bucket_of(private.sign_up_limits, integer) from public, anon, authenticated, service_role;
