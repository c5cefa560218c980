-- The public key may only sign up: PostgREST's pre-request function refuses every other request
-- it sends before its statement is planned, and charges its sign-ups before anything can fail.
-- As in supabase/schemas/27_request_gate.sql, which says why.

create schema request_gate;
comment on schema request_gate is 'PostgREST''s pre-request function; never exposed over the REST API.';
revoke all on schema request_gate from public;
grant usage on schema request_gate to anon, authenticated, service_role;

create function request_gate.check_request()
returns void language plpgsql security definer set search_path = '' as $$
begin
  -- The request's role (current_user is this function's owner).
  if current_setting('role') not in ('anon', 'authenticated') then
    return;
  end if;
  if current_setting('request.method', true) = 'POST' and current_setting('request.path', true) = '/early_access' then
    perform private.charge_request();
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
