-- The browser tests' backend: every sign-up of the run comes from 127.0.0.1, so the
-- per-address limits are lifted (their own tests are in tests/backend/sign-up-limits.test.ts).
update private.sign_up_limits set max_sign_ups = 1000000;
