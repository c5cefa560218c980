-- The early-access list: one row per address that asked to hear about the launch.
--
-- The page's key is public, so every rule here faces the open internet: anyone may call the REST
-- API with that key directly, and the database alone keeps what the page promises. The limits on
-- how fast sign-ups may come, and the marks for the owner's review, are in the next files.

create table public.early_access (
  id uuid primary key default gen_random_uuid(),
  -- Stored normalised (the trigger below), so that the unique constraint means one row per
  -- address, whatever its case or surrounding spaces.
  email text not null,
  -- Free text, no format check (the form has none); an empty phone is stored as null.
  phone text,
  created_at timestamptz not null default now(),
  -- Checked when the request's transaction commits. Checked at once, a request of several rows
  -- would learn whether its first address is on the list before being refused for its second,
  -- and so probe the list for free.
  constraint early_access_email_key unique (email) deferrable initially deferred
);
comment on table public.early_access is 'People who asked for early access, one row per email address.';

-- What is stored ------------------------------------------------------------------------------

-- Normalises what visitors type before the checks below run, instead of refusing it: what
-- JavaScript's trim() takes off, as the form does before sending (every Unicode space); then only
-- ASCII letters lowered: lower() would turn some other letters into ASCII ones (the Kelvin sign
-- into k), and store an address the browser refuses as one it accepts.
create function private.normalize_early_access()
returns trigger
language plpgsql
security invoker
set search_path = ''
as $$
begin
  -- What JavaScript's trim() takes off, as the form does before sending: every Unicode space.
  -- Then only ASCII letters are lowered: lower() would turn some other letters into ASCII ones
  -- (the Kelvin sign into k), and store an address the browser refuses as one it accepts.
  new.email := translate(regexp_replace(new.email,
    '^[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+|[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$', '', 'g'),
    'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
  -- Visitors' requests adding one address take turns. Its uniqueness is checked at commit, where
  -- two of them would each wait for the other's row (a deadlock, answered 500); in turn, the
  -- later one finds the earlier's row committed and fails as a duplicate (23505). Only the API's
  -- public roles, which add one row per request: an owner's import of many rows at once would
  -- hold a lock per row.
  if current_setting('role') in ('anon', 'authenticated') then
    perform pg_advisory_xact_lock(hashtextextended(new.email, 0));
  end if;
  new.phone := nullif(regexp_replace(new.phone,
    '^[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+|[\u0009-\u000d\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$', '', 'g'), '');
  return new;
end;
$$;

create trigger normalize_early_access
  before insert or update on public.early_access
  for each row execute function private.normalize_early_access();

-- Exactly what the form's email field accepts: the browser's type=email grammar (WHATWG "valid
-- e-mail address"), lowercased, at most 254 characters. No JSON text, second '@', spaces,
-- control or format characters. NOT VALID: rows stored before the rule are left as they were
-- (supabase/README.md says how to check and validate them); every new row must pass.
alter table public.early_access add constraint early_access_email_check check (
  char_length(email) <= 254
  and email ~ '^[a-z0-9.!#$%&''*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$'
) not valid;

-- Free text of at most 32 characters, with nothing invisible in it: no control (Cc) or format
-- (Cf) characters, line or paragraph separators, blank fillers (Braille, Hangul), private-use
-- characters, noncharacters, and no Default_Ignorable_Code_Point at all (Unicode's
-- DerivedCoreProperties.txt), assigned or not: combining grapheme joiner, variation selectors,
-- Mongolian and Khmer invisibles, tag characters, and the ranges kept for future ones.
-- NOT VALID, as the email's check.
alter table public.early_access add constraint early_access_phone_check check (
  char_length(phone) between 1 and 32
  and phone !~ '^\s|\s$'
  and phone !~ '[\u0001-\u001f\u007f-\u009f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u2800\u3164\ue000-\uf8ff\ufdd0-\ufdef\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\ufffe\uffff\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff\U000f0000-\U0010ffff\U0001fffe-\U0001ffff\U0002fffe-\U0002ffff\U0003fffe-\U0003ffff\U0004fffe-\U0004ffff\U0005fffe-\U0005ffff\U0006fffe-\U0006ffff\U0007fffe-\U0007ffff\U0008fffe-\U0008ffff\U0009fffe-\U0009ffff\U000afffe-\U000affff\U000bfffe-\U000bffff\U000cfffe-\U000cffff\U000dfffe-\U000dffff\U000efffe-\U000effff]'
) not valid;

-- Who may do what -----------------------------------------------------------------------------

alter table public.early_access enable row level security;

-- A visitor (the publishable key acts as anon) adds one sign-up per request and reads back only
-- that row, never anyone else's: the trigger that admits a sign-up
-- (private.admit_sign_up, in 20_sign_up_limits.sql) marks its transaction with the row's id, in a
-- transaction-local setting that nothing a client sends can set, gone when the request ends.
-- (Compared as a uuid, so that a read-back finds the row by its primary key.)
create policy "Visitors add only the sign-up their request was admitted for"
  on public.early_access for insert
  to anon, authenticated
  with check (id = nullif(current_setting('early_access.admitted_sign_up', true), '')::uuid);

create policy "Visitors can read back only the sign-up their own request added"
  on public.early_access for select
  to anon, authenticated
  using (id = nullif(current_setting('early_access.admitted_sign_up', true), '')::uuid);

-- Every privilege explicitly: older projects grant everything on new tables to the API roles,
-- newer ones nothing. Visitors insert an email and a phone (the read-back needs SELECT); never
-- update or delete. The secret key (service_role) is the owner's.
revoke all on table public.early_access from anon, authenticated;
grant insert (email, phone) on table public.early_access to anon, authenticated;
grant select on table public.early_access to anon, authenticated;
grant all on table public.early_access to service_role;
