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

-- Marks a stored sign-up for review (private.after_sign_up calls it, once the sign-up is counted
-- past a pace): the source's short keyed id (the first 6 bytes of its address's keyed hash) and
-- the paces it passed, in words. The mark's key is checked against the list by its id, never by a
-- scan, however empty the list was when the plan was made (25_sign_up_rules.sql says why).
create function private.record_mark(sign_up_id uuid, source_key bytea, reasons text)
returns void language plpgsql volatile set search_path = '' set enable_seqscan = off as $$
begin
  insert into public.early_access_marks (sign_up_id, source, reason)
  values (sign_up_id, encode(substring(source_key from 1 for 6), 'hex'), reasons);
end;
$$;

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
revoke all on function private.record_mark(uuid, bytea, text) from public, anon, authenticated, service_role;
