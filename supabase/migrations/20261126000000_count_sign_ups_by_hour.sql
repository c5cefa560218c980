-- The owner's chart: sign-ups per hour and the list's totals, counted in the database when read.

-- How the list grows, for the owner's chart (`npm run sign-ups -- count`): sign-ups counted in the
-- database when read, so that the command fetches a few hundred rows however long the list, and a
-- sign-up writes nothing more for them. Only the secret key reads them.

-- What the planner should know of the quarter hours below: how many there are, so that it counts
-- them in a hash table rather than sorting every sign-up. Statistics, not an index: ANALYZE
-- gathers them; a sign-up writes nothing for them.
create statistics public.early_access_quarter_hours
  on (date_bin(interval '15 minutes', created_at, timestamptz '2000-01-01 00:00:00+00'))
  from public.early_access;

-- Sign-ups per UTC hour, and per quarter of it (:00, :15, :30, :45): every time zone's clock is
-- a whole number of quarter hours from UTC (India's UTC+5:30, Nepal's UTC+5:45), so the quarters
-- add up into any zone's local hours and days exactly. Hours without a sign-up have no row.
create view public.early_access_hours with (security_invoker = true) as
select date_bin(interval '1 hour', q.starts_at, timestamptz '2000-01-01 00:00:00+00') as starts_at,
       sum(q.sign_ups)::integer as sign_ups,
       array[
         coalesce(sum(q.sign_ups) filter (where date_part('minute', q.starts_at at time zone 'UTC') = 0), 0),
         coalesce(sum(q.sign_ups) filter (where date_part('minute', q.starts_at at time zone 'UTC') = 15), 0),
         coalesce(sum(q.sign_ups) filter (where date_part('minute', q.starts_at at time zone 'UTC') = 30), 0),
         coalesce(sum(q.sign_ups) filter (where date_part('minute', q.starts_at at time zone 'UTC') = 45), 0)
       ]::integer[] as by_quarter
  from (select date_bin(interval '15 minutes', e.created_at, timestamptz '2000-01-01 00:00:00+00') as starts_at,
               count(*) as sign_ups
          from public.early_access e
         group by 1) q
 group by 1;
comment on view public.early_access_hours is
  'Sign-ups per UTC hour, and per quarter of it (by_quarter: from :00, :15, :30, :45).';

-- The whole list in one row: how many, how many left a phone (those the discount is for), how
-- many are marked for review, and the first and latest sign-up.
create view public.early_access_totals with (security_invoker = true) as
select count(*)::integer as sign_ups,
       count(e.phone)::integer as with_phone,
       (select count(*) from public.early_access_marks)::integer as marked,
       min(e.created_at) as first_at,
       max(e.created_at) as last_at
  from public.early_access e;
comment on view public.early_access_totals is
  'The whole list in one row: sign-ups, with a phone, marked for review, the first and the latest.';

-- The owner's command reads them with the secret key (service_role); the public roles get nothing.
revoke all on table public.early_access_hours, public.early_access_totals
  from anon, authenticated, service_role;
grant select on table public.early_access_hours, public.early_access_totals to service_role;
