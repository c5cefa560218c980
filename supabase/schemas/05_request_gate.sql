-- The gate before every request: the public key may only sign up.
--
-- PostgREST calls one function before each request's statement (its pre-request function,
-- `db-pre-request`), in the request's transaction, once it has set the request's role, method,
-- path and headers: before the statement is planned. PostgreSQL plans a statement before it
-- checks privileges or row security, and compiles a filter's regular expression while planning,
-- so without the gate a read the public key may not make still costs what its plan costs (three
-- seconds of CPU for `?email=match.((a?){1,30}){1,30}`).
--
-- So, for the public key (anon, and authenticated, a signed-in user, whom the site never has):
--   - a POST to /early_access, the page's sign-up, goes on to the sign-up rules
--     (25_sign_up_rules.sql), which judge and count it;
--   - every other request (GET, HEAD, PATCH, PUT, DELETE, any other path, /rpc/…) is refused
--     with 42501, which PostgREST answers 401 (403 for authenticated), as it answers a missing
--     grant: the owner's command reads that as "this key may not do this".
-- The secret key (service_role) and the owner pass untouched.
--
-- PostgREST reads which function from its role's settings (`pgrst.db_pre_request`), set below,
-- and again on `notify pgrst, 'reload config'`.

-- Its own schema: not exposed over the API, so no request can call the gate itself, and with
-- nothing else in it, so that the API roles, which must use the schema to run the gate, reach
-- nothing else through it.
create schema request_gate;
comment on schema request_gate is 'PostgREST''s pre-request function; never exposed over the REST API.';
revoke all on schema request_gate from public;
grant usage on schema request_gate to anon, authenticated, service_role;

-- It reads nothing but the request's role, method and path, and runs with the caller's rights.
create function request_gate.check_request()
returns void language plpgsql security invoker set search_path = '' as $$
begin
  if current_user not in ('anon', 'authenticated')
     or (current_setting('request.method', true) = 'POST' and current_setting('request.path', true) = '/early_access') then
    return;
  end if;
  raise exception using
    errcode = 'insufficient_privilege',
    message = 'permission denied: this key may only add a sign-up (POST /early_access)';
end;
$$;

-- Every request runs it, whatever its role: the three API roles may, nobody else.
revoke all on function request_gate.check_request() from public;
grant execute on function request_gate.check_request() to anon, authenticated, service_role;

alter role authenticator set pgrst.db_pre_request = 'request_gate.check_request';
notify pgrst, 'reload config';
