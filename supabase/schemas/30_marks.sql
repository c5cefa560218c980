-- Sign-ups past a normal pace, marked for the owner's review (25_sign_up_rules.sql counts the paces), in a
-- table of their own: the public key cannot read a mark or a source, not even on the read-back
-- of its own row, whose `select=*` is the sign-up's own columns only. Unmarked sign-ups record
-- nothing about their source.

create table public.early_access_marks (
  sign_up_id uuid primary key references public.early_access (id) on delete cascade,
  -- The address's keyed hash, shortened: one id per address, and no address.
  source text not null,
  -- Which pace it passed, and by how much, in words.
  reason text not null
);
comment on table public.early_access_marks is
  'Sign-ups past a normal pace, for the owner to review: their source (a keyed id, never an address) and why.';

alter table public.early_access_marks enable row level security;
-- No API role but the secret key's is granted anything here; should a grant ever slip in (older
-- projects grant every new table to anon by default), visitors still see no mark.
create policy "Visitors never see marks"
  on public.early_access_marks as restrictive for all
  to anon, authenticated
  using (false) with check (false);

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

-- Writes the mark private.mark_past_pace held, once the sign-up's row is stored: only a row that
-- was inserted gets one (an upsert that skips a duplicate leaves none behind). Called only when
-- a mark is held.
create function private.record_mark()
returns trigger language plpgsql security definer set search_path = '' as $$
declare
  mark json := nullif(current_setting('early_access.mark', true), '')::json;
begin
  if (mark ->> 'sign_up_id')::uuid = new.id then
    insert into public.early_access_marks (sign_up_id, source, reason) values (new.id, mark ->> 'source', mark ->> 'reason');
  end if;
  return null;
end;
$$;

create trigger early_access_3_mark
  after insert on public.early_access
  for each row when (current_setting('early_access.mark', true) <> '') execute function private.record_mark();

-- Every sign-up with its mark, if any, and its address's domain. Security invoker: read with the
-- reader's own rights. Its mark columns are subqueries, so the view stays updatable: the owner
-- removes a source's marked sign-ups through it (`delete … where source = …`), and a domain's
-- (`delete … where domain = …`, for a domain the owner's command marks: 50_addresses.sql).
create view public.early_access_with_marks with (security_invoker = true) as
select e.id, e.email, e.phone, e.created_at,
       (select m.source from public.early_access_marks m where m.sign_up_id = e.id) as source,
       (select m.reason from public.early_access_marks m where m.sign_up_id = e.id) as review,
       split_part(e.email, '@', 2) as domain
  from public.early_access e;

-- Marked sign-ups by source: enough to tell a crowd of people from a script's junk at a glance.
create view public.early_access_sources with (security_invoker = true) as
select m.source,
       count(*)::integer as sign_ups,
       min(e.created_at) as first_at,
       max(e.created_at) as last_at,
       (array_agg(e.email order by e.created_at, e.id))[1:3] as some_emails
  from public.early_access_marks m
  join public.early_access e on e.id = m.sign_up_id
 group by m.source;

-- The owner's command reads and removes marks with the secret key (service_role); the public
-- roles get nothing.
revoke all on table public.early_access_marks, public.early_access_with_marks, public.early_access_sources
  from anon, authenticated, service_role;
grant select, delete on table public.early_access_marks to service_role;
grant select, delete on table public.early_access_with_marks to service_role;
grant select on table public.early_access_sources to service_role;
revoke all on function private.mark_past_pace(uuid, private.sign_up_source, private.sign_up_source, float8),
  private.record_mark() from public, anon, authenticated, service_role;
