-- For tests whose sign-ups all come from 127.0.0.1 but are not about the sign-up limits (the
-- browser tests, most backend tests): no limits, so nothing is marked or refused. The
-- limits' own tests hold small ones (tests/database/small-limits.ts), and check the migrations'.
delete from private.sign_up_limits;
call private.apply_sign_up_limits();
