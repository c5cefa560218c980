-- The schema `private`: the helpers of the public tables (the sign-up limits, their sources'
-- states, the key of their hashes, the trigger functions). The REST API exposes `public` only, and no API role may
-- use `private`: not the public key's, not even the secret key's.
create schema private;
comment on schema private is 'Helpers of the public tables; never exposed over the REST API.';
revoke all on schema private from public, anon, authenticated, service_role;
