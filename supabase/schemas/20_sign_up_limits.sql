-- The sign-up limits: what one client is, and how many sign-ups it may make. Every number the
-- rules go by stands here, once; the rules themselves are in 25_sign_up_rules.sql. No real
-- person is refused because others share their address (offices, campuses, conference Wi-Fi,
-- carrier NAT): past a pace a sign-up is stored and marked for the owner's review; only past a
-- ceiling, far beyond any crowd, is one refused, with 429. To change a limit on a live project,
-- change it here and in a new migration (the README's "Common changes").

-- What "one client" is, per scope: an address (an IPv4 address, or an IPv6 /56, what an ISP hands
-- one customer), or its network (an IPv4 /24, an IPv6 /48). A scope's paces are counted in
-- `shards` that each hold their share of every pace: a stored sign-up holds its shard's row lock
-- until its commit is on disk, so a network's sign-ups take turns per shard, not all in one line.
-- (Ceilings hold no row lock, and count each client whole.)
create table private.sign_up_scopes (
  name text primary key check (name in ('address', 'network')),
  ipv4_prefix integer not null check (ipv4_prefix between 0 and 32),
  ipv6_prefix integer not null check (ipv6_prefix between 0 and 128),
  shards integer not null check (shards between 1 and 64)
);
comment on table private.sign_up_scopes is 'What one client is, per scope of the sign-up limits, and in how many shards its paces are counted.';
insert into private.sign_up_scopes (name, ipv4_prefix, ipv6_prefix, shards) values
  ('address', 32, 56, 1),
  ('network', 24, 48, 16);

-- Each limit is a leaky bucket (GCRA) that holds max_sign_ups and drains that many every
-- window_length: one comes free every window_length / max_sign_ups. A sign-up is over a limit
-- when its bucket, with it, holds more than max_sign_ups. So a limit of N per W admits N at once
-- and N more every W after: at most N + N·t/W in any span t (2N in one W), never N + 1 in one
-- burst.
create table private.sign_up_limits (
  name text not null,
  window_length interval not null check (window_length > interval '0'),
  max_sign_ups integer not null check (max_sign_ups > 0),
  per text not null references private.sign_up_scopes (name),
  kind text not null check (kind in ('pace', 'ceiling')),
  primary key (kind, name)
);
comment on table private.sign_up_limits is
  'Leaky buckets per client: max_sign_ups, draining that many each window_length. Past a pace, a sign-up is stored and marked for review; past a ceiling, it is refused (429).';

-- THE LIMITS. Every number of the rules is in this file, and only here (how the counts are kept
-- is below): documents and tests read them from these tables. Paces, as a crowd of people rarely passes them and a script does at once.
-- Ceilings, far above any crowd: per address, an hour's (a keynote's whole audience behind one
-- address; a flood from one address stores about this many, all past the pace marked) and a
-- day's (three such crowds); per network (a campus, a carrier's NAT pool: 250 people from 250
-- addresses of one /24 are all stored), where a script rotating through a /24's 256 addresses,
-- each under its own ceiling, still stops.
insert into private.sign_up_limits (kind, name, per, window_length, max_sign_ups) values
  ('pace', 'per address per minute', 'address', interval '1 minute', 10),
  ('pace', 'per address per day', 'address', interval '1 day', 100),
  ('pace', 'per network per hour', 'network', interval '1 hour', 200),
  ('ceiling', 'per address per hour', 'address', interval '1 hour', 1000),
  ('ceiling', 'per address per day', 'address', interval '1 day', 3000),
  ('ceiling', 'per network per hour', 'network', interval '1 hour', 2000),
  ('ceiling', 'per network per day', 'network', interval '1 day', 10000);

-- How the rules keep their counts, in numbers (25_sign_up_rules.sql says how each is used):
--   - ceiling_slots: each ceiling counts its clients in this many slots, a sequence each, as a
--     slot's count outlives a rollback (the rules' "Attempts"). A client shares its slot with
--     about one in ceiling_slots of the others, so more slots, fewer clients riding free while a
--     stranger fills theirs; each slot is a relation of 8 kB. Read when a ceiling is added: to
--     change it on a live project, update it in a migration, which makes the slots anew (empty).
--   - forget_batch and forget_one_in: one sign-up in forget_one_in that adds a source looks at
--     forget_batch others and forgets those whose paces are all empty, so that the paces' table
--     stays about as large as a day's clients.
create table private.sign_up_counting (
  only_row boolean primary key default true check (only_row),
  ceiling_slots integer not null check (ceiling_slots between 1 and 4096),
  forget_batch integer not null check (forget_batch > 0),
  forget_one_in integer not null check (forget_one_in between 1 and 256)
);
comment on table private.sign_up_counting is 'How the sign-up rules keep their counts: slots per ceiling, and how fast empty paces are forgotten.';
insert into private.sign_up_counting (ceiling_slots, forget_batch, forget_one_in) values (256, 32, 8);

-- The statistics the planner reads for these tables, taken now: autovacuum analyzes a table only
-- after 50 changed rows, and a table never analyzed is planned as if it held a thousand rows,
-- which makes a sign-up's plans costly enough for PostgreSQL to compile them (JIT) where it can.
analyze private.sign_up_scopes, private.sign_up_limits, private.sign_up_counting;

-- Nobody but the owner reaches them: not the API roles, not even the secret key's.
revoke all on table private.sign_up_scopes, private.sign_up_limits, private.sign_up_counting
  from public, anon, authenticated, service_role;
