-- What the owner's command needs to mark addresses that look undeliverable or doubled: the list
-- grouped by domain and by mailbox, counted by the database when read, so that the command
-- fetches a few rows however long the list, and a sign-up writes nothing for them. Which domains
-- are disposable or mistyped is the command's to say (tools/sign-ups/marks.ts), from lists
-- published on npm: they change with an `npm update`, never with a migration. Only the secret
-- key reads these views.

-- Sign-ups that reach the same mailbox as an earlier one: each later sign-up, with the address of
-- the earliest (which is not listed: it stays clean). Only at providers that deliver variants of
-- an address to one mailbox: Gmail ignores the dots of the name and anything after a `+`, and
-- googlemail.com is gmail.com; Outlook.com (its hotmail and live domains too), iCloud, Fastmail and
-- Proton ignore anything after a `+`. Everywhere else, john.doe@ and johndoe@ may be two people.
create view public.early_access_repeats with (security_invoker = true) as
with providers (domain, mailbox_domain, ignores_dots) as (
  values ('gmail.com', 'gmail.com', true), ('googlemail.com', 'gmail.com', true),
         ('outlook.com', 'outlook.com', false), ('hotmail.com', 'hotmail.com', false),
         ('live.com', 'live.com', false), ('msn.com', 'msn.com', false),
         ('hotmail.co.uk', 'hotmail.co.uk', false), ('hotmail.fr', 'hotmail.fr', false),
         ('outlook.fr', 'outlook.fr', false), ('live.co.uk', 'live.co.uk', false),
         ('icloud.com', 'icloud.com', false), ('me.com', 'me.com', false), ('mac.com', 'mac.com', false),
         ('fastmail.com', 'fastmail.com', false), ('fastmail.fm', 'fastmail.fm', false),
         ('proton.me', 'proton.me', false), ('protonmail.com', 'protonmail.com', false),
         ('protonmail.ch', 'protonmail.ch', false), ('pm.me', 'pm.me', false)
),
mailboxes as (
  select e.id, e.email, e.created_at, c.name || '@' || p.mailbox_domain as mailbox
    from public.early_access e
    join providers p on p.domain = split_part(e.email, '@', 2)
   cross join lateral (select split_part(split_part(e.email, '@', 1), '+', 1) as name) n
   cross join lateral (select case when p.ignores_dots then replace(n.name, '.', '') else n.name end as name) c
   -- A name of nothing but a tag or dots (`+x@gmail.com`, `..@gmail.com`) names no mailbox.
   where c.name <> ''
),
firsts as (
  select b.id, b.email, b.created_at,
         first_value(b.email) over (partition by b.mailbox order by b.created_at, b.id) as repeats
    from mailboxes b
)
select f.id, f.email, f.created_at, f.repeats
  from firsts f
 where f.email <> f.repeats;
comment on view public.early_access_repeats is
  'Sign-ups that reach the same mailbox as an earlier one (Gmail''s dots, + tags), with the earliest address (repeats).';

-- What the planner should know of the domains below: how many there are, so that it counts them
-- in a hash table, in parallel, as it does the quarter hours (40_sign_ups_by_hour.sql). Statistics,
-- not an index: ANALYZE gathers them; a sign-up writes nothing for them.
create statistics public.early_access_email_domains
  on (split_part(email, '@', 2))
  from public.early_access;

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

-- Later sign-ups to a mailbox, grouped by the earliest address: one row per mailbox reached again.
create view public.early_access_mailboxes with (security_invoker = true) as
select r.repeats,
       count(*)::integer as sign_ups,
       min(r.created_at) as first_at,
       max(r.created_at) as last_at,
       (array_agg(r.email order by r.created_at, r.id))[1:3] as some_emails
  from public.early_access_repeats r
 group by r.repeats;
comment on view public.early_access_mailboxes is
  'Later sign-ups to a mailbox reached before, per earliest address (repeats): how many, when, the first few.';

-- The owner's command reads them with the secret key (service_role); the public roles get nothing.
revoke all on table public.early_access_repeats, public.early_access_domain_counts,
                    public.early_access_domains, public.early_access_mailboxes
  from anon, authenticated, service_role;
grant select on table public.early_access_repeats, public.early_access_domain_counts,
                      public.early_access_domains, public.early_access_mailboxes
  to service_role;
