-- The early-access list: one row per address that asked to hear when we launch.
--
-- The public (anon) key may add an email and a phone; it can never change or delete sign-ups.
-- The rules about what is stored live here, so they also hold for anyone calling the REST API
-- directly. The next migration (20261122120000_guard_sign_ups.sql) tightens them.

create table public.early_access (
  id uuid primary key default gen_random_uuid(),
  -- Stored trimmed and lowercased (see the trigger below), so the unique constraint means
  -- one row per address whatever its case or surrounding spaces.
  email text not null
    constraint early_access_email_check check (
      email = lower(email)
      and email !~ '^\s|\s$'
      and position('@' in email) > 0
      and char_length(email) <= 254
    ),
  -- Stored trimmed; an empty phone is stored as null.
  phone text
    constraint early_access_phone_check check (
      phone !~ '^\s|\s$'
      and char_length(phone) between 1 and 32
    ),
  created_at timestamptz not null default now(),
  constraint early_access_email_key unique (email)
);

comment on table public.early_access is 'People who asked for early access, one row per email address.';

-- Normalises what visitors type before the checks above run, instead of refusing it.
create function public.normalize_early_access()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  new.email := lower(regexp_replace(new.email, '^\s+|\s+$', '', 'g'));
  new.phone := nullif(regexp_replace(new.phone, '^\s+|\s+$', '', 'g'), '');
  return new;
end;
$$;

create trigger normalize_early_access
  before insert or update on public.early_access
  for each row execute function public.normalize_early_access();

alter table public.early_access enable row level security;

-- Visitors sign up with the public key.
create policy "Visitors can join the early access list"
  on public.early_access for insert
  to anon, authenticated
  with check (true);

-- The site asks for the new row back (insert ... returning). This first rule is WRONG and is
-- replaced by 20261122120000_guard_sign_ups.sql: now() is the start of the transaction, which
-- concurrent transactions can share, so a visitor's read could match other visitors' rows.
create policy "Visitors can read back only the sign-up they just made"
  on public.early_access for select
  to anon, authenticated
  using (created_at = now());

-- Every privilege explicitly. Older projects grant all on new tables in public to anon and
-- authenticated by default, so start from nothing.
revoke all on table public.early_access from anon, authenticated;
grant insert (email, phone) on table public.early_access to anon, authenticated;
grant select on table public.early_access to anon, authenticated;
grant all on table public.early_access to service_role;
