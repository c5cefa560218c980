-- The sign-up limits: what one client is, and how many sign-ups it may make. Every number the
-- rules go by stands here, once; the rules themselves are in 25_sign_up_rules.sql. No real
-- person is refused because others share their address (offices, campuses, conference Wi-Fi,
-- carrier NAT): past a pace a sign-up is stored and marked for the owner's review; only past a
-- ceiling, far beyond any crowd, is one refused, with 429. To change a limit on a live project,
-- change it here and in a new migration that ends with `call private.apply_sign_up_limits();`
-- (supabase/README.md, "Changing a limit").

-- What "one client" is, per scope. There are two, fixed (the check on `name`), and their sizes are
-- data: an address (an IPv4 address, or an IPv6 /56, what an ISP hands one customer), against a
-- script at one address, and its network (an IPv4 /24, an IPv6 /48), against one rotating through
-- a network's addresses. The rules take the address's before the network's: the order of their
-- row locks and of a failure's charge. A scope's sign-ups are counted in
-- `shards` that each hold their share of every limit: a stored sign-up holds its shard's row lock
-- until its commit is on disk, so a network's sign-ups take turns per shard, not all in one line.
-- Its failures (what the rules refuse: 25_sign_up_rules.sql) are counted in a sketch of
-- `sketch_rows` rows of `sketch_width` cells per ceiling, shared by every client of the scope: a
-- client counts in one cell a row, and a failure of its own meets 429 when every one of its
-- cells is full. With k of a scope's clients held at a ceiling by their failures, a stranger's
-- own failure meets 429 there about (1 - e^(-k / width))^rows of the time for an address (a held
-- address fills its cell alone); a network's cell is full with two held networks in it. A new
-- sign-up never reads the sketch. Each cell is a sequence of about 10 kB with its catalog rows:
-- the sizes keep what the rules themselves add to a project under 8 MB (`npm run bench:cost`).
create table private.sign_up_scopes (
  name text primary key check (name in ('address', 'network')),
  ipv4_prefix integer not null check (ipv4_prefix between 0 and 32),
  ipv6_prefix integer not null check (ipv6_prefix between 0 and 128),
  shards integer not null check (shards between 1 and 64),
  -- A row's column is 4 bytes of the client's 32-byte keyed hash: at most 8 rows.
  sketch_rows integer not null check (sketch_rows between 1 and 8),
  sketch_width integer not null check (sketch_width between 1 and 3000)
);
comment on table private.sign_up_scopes is
  'What one client is in each of the two scopes of the sign-up limits (address, network), in how many shards its sign-ups are counted, and the size of the sketch its failures are counted in.';
insert into private.sign_up_scopes (name, ipv4_prefix, ipv6_prefix, shards, sketch_rows, sketch_width) values
  ('address', 32, 56, 1, 1, 224),
  ('network', 24, 48, 16, 1, 96);

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
-- is below): documents and tests read them from these tables. Paces, as a crowd of people rarely
-- passes them and a script does at once. Ceilings, far above any crowd: per address, an hour's (a keynote's whole audience behind one
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

-- How the rules keep their clients' counts, in numbers (25_sign_up_rules.sql says how each is
-- used): one sign-up in forget_one_in that adds a source looks at forget_batch others and forgets
-- those whose buckets are all empty, so that the sources' table stays about as large as a day's
-- clients.
create table private.sign_up_counting (
  only_row boolean primary key default true check (only_row),
  forget_batch integer not null check (forget_batch > 0),
  forget_one_in integer not null check (forget_one_in between 1 and 256)
);
comment on table private.sign_up_counting is 'How the sign-up rules keep their clients'' counts: how fast empty ones are forgotten.';
insert into private.sign_up_counting (forget_batch, forget_one_in) values (32, 8);

-- The statistics the planner reads for these tables, taken now: autovacuum analyzes a table only
-- after 50 changed rows, and a table never analyzed is planned as if it held a thousand rows,
-- which makes a sign-up's plans costly enough for PostgreSQL to compile them (JIT) where it can.
analyze private.sign_up_scopes, private.sign_up_limits, private.sign_up_counting;

-- Nobody but the owner reaches them: not the API roles, not even the secret key's.
revoke all on table private.sign_up_scopes, private.sign_up_limits, private.sign_up_counting
  from public, anon, authenticated, service_role;
