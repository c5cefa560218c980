-- For tests whose sign-ups all come from 127.0.0.1 but are not about the per-address limits
-- (the browser tests, most backend tests): lifts the limits. The limits' own tests keep the
-- migration's (tests/backend/sign-up-limits.test.ts).
update private.sign_up_limits set max_sign_ups = 1000000;
