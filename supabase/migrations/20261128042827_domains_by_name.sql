-- The owner's domain views answer with named fields instead of positions in an array
-- (supabase/schemas/50_addresses.sql): tools/sign-ups/client.ts reads each domain's counts by name.
-- Their column changes, so each view is dropped and made again, with its grants.

drop view public.early_access_domain_counts;
drop view public.early_access_domains;

-- The list by email domain (the part after the `@`, stored lowercase), every domain in one row:
-- a project answers at most 1,000 rows at once, and each further page would count the whole list
-- again. `domains` holds one object per domain, its fields named as the columns below: its
-- sign-ups, of them marked past a pace (past_pace), of them later sign-ups to a mailbox reached
-- before (repeats), of those marked past a pace (repeats_past_pace). With them the command counts
-- every reason, and each marked sign-up once. Counted in a hash table, without sorting the list;
-- the marks and the repeats, a small part of it, apart.
create view public.early_access_domain_counts with (security_invoker = true) as
with per_domain as (
  select split_part(e.email, '@', 2) as domain, count(*) as sign_ups
    from public.early_access e
   group by 1
),
past_pace as (
  select split_part(e.email, '@', 2) as domain, count(*) as sign_ups
    from public.early_access_marks m
    join public.early_access e on e.id = m.sign_up_id
   group by 1
),
repeats as (
  select split_part(r.email, '@', 2) as domain, count(*) as sign_ups, count(m.sign_up_id) as past_pace
    from public.early_access_repeats r
    left join public.early_access_marks m on m.sign_up_id = r.id
   group by 1
)
select coalesce(json_agg(c), '[]') as domains
  from (select d.domain,
               d.sign_ups,
               coalesce(p.sign_ups, 0) as past_pace,
               coalesce(r.sign_ups, 0) as repeats,
               coalesce(r.past_pace, 0) as repeats_past_pace
          from per_domain d
          left join past_pace p on p.domain = d.domain
          left join repeats r on r.domain = d.domain) c;
comment on view public.early_access_domain_counts is
  'One row: each email domain''s sign-ups, marked past a pace, repeating a mailbox, and both, by name.';

-- The same domains with when their first and latest sign-up came, and one or two of their
-- addresses (the first and the last in alphabetical order, which a hash table keeps without
-- sorting the list): `domains` holds one object per domain, its fields named as the columns
-- below. The command shows those it marks.
create view public.early_access_domains with (security_invoker = true) as
select coalesce(json_agg(d), '[]') as domains
  from (select g.domain, g.sign_ups, g.first_at, g.last_at,
               case when g.an_address = g.another then array[g.an_address]
                    else array[g.an_address, g.another] end as some_emails
          from (select split_part(e.email, '@', 2) as domain,
                       count(*) as sign_ups,
                       min(e.created_at) as first_at,
                       max(e.created_at) as last_at,
                       min(e.email) as an_address,
                       max(e.email) as another
                  from public.early_access e
                 group by 1) g) d;
comment on view public.early_access_domains is
  'One row: each email domain''s sign-ups, first and latest, and its first and last address alphabetically, by name.';

revoke all on table public.early_access_domain_counts, public.early_access_domains
  from anon, authenticated, service_role;
grant select on table public.early_access_domain_counts, public.early_access_domains to service_role;
