-- The early-access list: one row per address that asked to hear about the launch.
--
-- The page's key is public, so every rule here faces the open internet: anyone may call the REST
-- API with that key directly, and the database alone keeps what the page promises. The limits on
-- how fast sign-ups may come, and the marks for the owner's review, are in the next files.

create table public.early_access (
  id uuid primary key default gen_random_uuid(),
  -- Stored normalised (private.normalized, below), so that the unique constraint means one row per
  -- address, whatever its case or surrounding spaces.
  email text not null,
  -- Free text, no format check (the form has none); an empty phone is stored as null.
  phone text,
  created_at timestamptz not null default now(),
  -- Checked at once, and never deferred: PostgREST's `on_conflict=email` with `Prefer:
  -- resolution=ignore-duplicates` needs a constraint it may use as an arbiter. A request of
  -- several rows learns no more than one of one row: the sign-up rules refuse its second row.
  constraint early_access_email_key unique (email)
);
comment on table public.early_access is 'People who asked for early access, one row per email address.';

-- What is stored ------------------------------------------------------------------------------

-- What visitors type, normalised as the form does before sending, unless a field is longer than
-- 1,000 characters, far beyond any real one: private.broken_check refuses that at once, before any
-- trim or regex reads it.
--   - the email: what JavaScript's trim() takes off (every Unicode space); then only A to Z
--     lowered: lower() would turn some other letters into ASCII ones (the Kelvin sign into k), and
--     store an address the browser refuses as one it accepts;
--   - the phone: trimmed, empty stored as null.
create function private.normalized(sign_up public.early_access)
returns public.early_access
language plpgsql immutable set search_path = '' as $$
declare
  -- What JavaScript's trim() takes off.
  spaces constant text := E'\t\n\u000b\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';
begin
  if coalesce(char_length(sign_up.email) <= 1000, true) and coalesce(char_length(sign_up.phone) <= 1000, true) then
    sign_up.email := translate(btrim(sign_up.email, spaces), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
    sign_up.phone := nullif(btrim(sign_up.phone, spaces), '');
  end if;
  return sign_up;
end;
$$;

-- The check a normalised sign-up breaks, named as a check constraint would be, or null. Lengths
-- first, so that no regex ever reads more than a real field holds:
--   - the email: exactly what the form's email field accepts, the browser's type=email grammar
--     (WHATWG "valid e-mail address"), at most 254 characters: no second '@', spaces, control or
--     format characters, or letters beyond ASCII;
--   - the phone: free text, at most 32 characters, with nothing invisible in it: no control (Cc)
--     or format (Cf) characters, line or paragraph separators, blank fillers (Braille, Hangul),
--     private-use characters, noncharacters, and no Default_Ignorable_Code_Point at all
--     (Unicode's DerivedCoreProperties.txt), assigned or not: combining grapheme joiner,
--     variation selectors, Mongolian and Khmer invisibles, tag characters, and the ranges kept
--     for future ones.
-- A missing email breaks none of these: the NOT NULL constraint refuses it.
create function private.broken_check(sign_up public.early_access)
returns text
language plpgsql immutable set search_path = '' as $$
begin
  if char_length(sign_up.email) > 1000 then
    return 'early_access_email_check';
  elsif char_length(sign_up.phone) > 1000 then
    return 'early_access_phone_check';
  elsif char_length(sign_up.email) > 254
     or sign_up.email !~ '^[a-z0-9.!#$%&''*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$' then
    return 'early_access_email_check';
  elsif char_length(sign_up.phone) > 32
     or sign_up.phone ~ '[\u0001-\u001f\u007f-\u009f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u2800\u3164\ue000-\uf8ff\ufdd0-\ufdef\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\ufffe\uffff\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff\U000f0000-\U0010ffff\U0001fffe-\U0001ffff\U0002fffe-\U0002ffff\U0003fffe-\U0003ffff\U0004fffe-\U0004ffff\U0005fffe-\U0005ffff\U0006fffe-\U0006ffff\U0007fffe-\U0007ffff\U0008fffe-\U0008ffff\U0009fffe-\U0009ffff\U000afffe-\U000affff\U000bfffe-\U000bffff\U000cfffe-\U000cffff\U000dfffe-\U000dffff\U000efffe-\U000effff]' then
    return 'early_access_phone_check';
  end if;
  return null;
end;
$$;

-- Refuses a sign-up that breaks `broken`, with SQLSTATE 23514 (HTTP 400), as a check constraint would.
create function private.refuse_check(broken text)
returns void
language plpgsql volatile set search_path = '' as $$
begin
  raise exception using
    errcode = 'check_violation',
    message = format('new row for relation "early_access" violates check constraint "%s"', broken),
    schema = 'public', table = 'early_access', constraint = broken;
end;
$$;

revoke all on function private.normalized(public.early_access), private.broken_check(public.early_access),
  private.refuse_check(text) from public, anon, authenticated, service_role;

-- Who may do what -----------------------------------------------------------------------------

alter table public.early_access enable row level security;

-- A visitor (the publishable key acts as anon) adds one sign-up per request and reads back only
-- that row, never anyone else's: the trigger that admits a sign-up
-- (private.before_sign_up, in 25_sign_up_rules.sql) marks its transaction with the row's id, in a
-- transaction-local setting that nothing a client sends can set, gone when the request ends.
-- (Compared as a uuid, so that a read-back finds the row by its primary key; read once per
-- statement, `(select …)`, not once per row.)
create policy "Visitors add only the sign-up their request was admitted for"
  on public.early_access for insert
  to anon, authenticated
  with check (id = nullif((select current_setting('early_access.admitted_sign_up', true)), '')::uuid);

create policy "Visitors can read back only the sign-up their own request added"
  on public.early_access for select
  to anon, authenticated
  using (id = nullif((select current_setting('early_access.admitted_sign_up', true)), '')::uuid);

-- Every privilege explicitly: older projects grant everything on new tables to the API roles,
-- newer ones nothing. Visitors insert an email and a phone (the read-back needs SELECT); never
-- update or delete. The secret key (service_role) is the owner's.
revoke all on table public.early_access from anon, authenticated;
grant insert (email, phone) on table public.early_access to anon, authenticated;
grant select on table public.early_access to anon, authenticated;
grant all on table public.early_access to service_role;
