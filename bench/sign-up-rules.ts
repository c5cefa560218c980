// `npm run bench:rules [-- --sign-ups N --rounds R]`: what the database's sign-up rules cost on
// launch day, beside the same sign-ups without them, with a gate alone and with every rule but the
// ceilings, over 50 connections; then the first sign-ups after a long idle spell. What each
// database is, how the rounds are taken, and the targets: bench/README.md. Prints the figures
// with their targets and writes them, with every sample, to bench/results/sign-up-rules.json; it
// never fails on them.
import { parseArgs } from "node:util";
import { SUPERUSER } from "../tools/local-supabase/database/cluster.ts";
import { OWNER } from "../tools/local-supabase/database/supabase-project.ts";
import { createPostgrest, type Postgrest } from "../tools/local-supabase/postgrest.ts";
import { randomAddress, signUpRequest } from "./sign-up-requests.ts";
import {
  MARK_ONLY,
  median,
  ms,
  startBenchCluster,
  table,
  verdict,
  withoutRules,
  writeResults,
  writtenOut,
} from "./support.ts";

const { values: options } = parseArgs({
  options: {
    "sign-ups": { type: "string", default: "2500" },
    rounds: { type: "string", default: "8" },
  },
});
const SIGN_UPS = Number(options["sign-ups"]);
const ROUNDS = Number(options.rounds);
const CONNECTIONS = 50;

/** The rules may cost at most this much throughput: sign-ups per second without them over with them. */
const MAX_COST = 1.6;
/** The ceilings may add at most this much to the cost of every other rule, in the same rounds. */
const MAX_CEILINGS_SHARE = 1.1;
/** The first sign-ups after a long idle spell: their p99 must stay under this. */
const MAX_P99_AFTER_IDLE_MS = 150;
/** A day of launch traffic in the sources' table: two sources (address, network) per visitor. */
const IDLE_BACKLOG = 300_000;
const AFTER_IDLE = 2_000;

/** The database with the trigger that only marks, and a gate that lets every request through. */
const GATE_ALONE = `${MARK_ONLY}
  create or replace function request_gate.check_request() returns void
  language plpgsql security invoker set search_path = '' as $$
  begin
  end;
  $$;`;

/** The database with every rule but the ceilings: none counted, no failure sketched. */
const NO_CEILINGS = `
  delete from private.sign_up_limits where kind = 'ceiling';
  call private.apply_sign_up_limits();`;

interface Run {
  perSecond: number;
  p50: number;
  p99: number;
}

/** `count` sign-ups, CONNECTIONS at a time: how many a second, and their latencies. */
async function run(handle: Postgrest["handle"], count: number): Promise<Run> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < count) {
        next++;
        const request = signUpRequest(randomAddress());
        const sent = performance.now();
        const { status, body } = await handle(request);
        if (status !== 201) throw new Error(`A sign-up failed: ${status} ${body}`);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const sorted = latencies.toSorted((a, b) => a - b);
  return {
    perSecond: count / elapsed,
    p50: sorted[Math.floor(sorted.length * 0.5)]!,
    p99: sorted[Math.floor(sorted.length * 0.99)]!,
  };
}

const cluster = await startBenchCluster(["with_rules", "without_rules", "gate_alone", "no_ceilings"]);
try {
  async function open(name: string, change?: string) {
    const owner = cluster.pool(OWNER, name, 1);
    if (change) await owner.exec(change);
    const api = cluster.pool("authenticator", name, CONNECTIONS);
    return { owner, handle: (await createPostgrest(api)).handle };
  }
  const withRules = await open("with_rules");
  const without = await open("without_rules", withoutRules("without_rules"));
  const gateAlone = await open("gate_alone", GATE_ALONE);
  const noCeilings = await open("no_ceilings", NO_CEILINGS);

  // Warm them up: connections opened, plans cached.
  for (const { handle } of [withRules, without, gateAlone, noCeilings]) await run(handle, 1_000);
  const samples: { withRules: Run[]; without: Run[]; gateAlone: Run[]; noCeilings: Run[] } = {
    withRules: [],
    without: [],
    gateAlone: [],
    noCeilings: [],
  };
  for (let round = 0; round < ROUNDS; round++) {
    samples.without.push(await run(without.handle, SIGN_UPS));
    samples.gateAlone.push(await run(gateAlone.handle, SIGN_UPS));
    samples.noCeilings.push(await run(noCeilings.handle, SIGN_UPS));
    samples.withRules.push(await run(withRules.handle, SIGN_UPS));
  }

  // Each run below starts with everything written out, as after any idle spell (writtenOut). First
  // the same sign-ups with no backlog: what the machine gives them anyway.
  const superuser = cluster.pool(SUPERUSER, "with_rules", 1);
  await writtenOut(superuser);
  const beforeIdle = await run(withRules.handle, AFTER_IDLE);

  // A long idle spell: a day of sources, all expired, behind statistics from an empty table.
  await withRules.owner.exec("truncate private.sign_up_sources; analyze private.sign_up_sources");
  await withRules.owner.exec(`
    insert into private.sign_up_sources (source_key, empty_at)
    select sha256(n::text::bytea), jsonb_build_object('pace per address per day', private.sign_up_clock() - 2 * 86400000)
      from generate_series(1, ${IDLE_BACKLOG}) n`);
  const scans = async () =>
    Number(
      (
        await withRules.owner.query<{ scans: string }>(
          "select seq_scan as scans from pg_catalog.pg_stat_user_tables where relid = 'private.sign_up_sources'::regclass",
        )
      ).rows[0]!.scans,
    );
  await writtenOut(superuser);
  const scansBefore = await scans();
  const afterIdle = await run(withRules.handle, AFTER_IDLE);
  // The server publishes its counters within a second.
  await new Promise((resume) => setTimeout(resume, 1_500));
  const wholeTableScans = (await scans()) - scansBefore;

  const rate = (runs: Run[]) => median(runs.map(({ perSecond }) => perSecond));
  const p99 = (runs: Run[]) => median(runs.map((sample) => sample.p99));
  // Each round's four ran back to back: the median of their ratios, not the ratio of medians,
  // so that the machine's drift over the whole run cancels out.
  const ratio = (over: Run[], runs: Run[]) =>
    median(over.map((sample, round) => sample.perSecond / runs[round]!.perSecond));
  const costOf = (runs: Run[]) => ratio(samples.without, runs);
  const figures = {
    cost: costOf(samples.withRules),
    gateAlone: costOf(samples.gateAlone),
    allButTheCeilings: costOf(samples.noCeilings),
    ceilingsOverTheRest: ratio(samples.noCeilings, samples.withRules),
    p99AfterIdleMs: afterIdle.p99,
    p99BeforeIdleMs: beforeIdle.p99,
    wholeTableScans,
  };
  const columns = [samples.without, samples.gateAlone, samples.noCeilings, samples.withRules];
  const costed = (runs: Run[]) => `${Math.round(rate(runs))} (${costOf(runs).toFixed(2)}×)`;
  const row = (name: string, figure: string, target: string) => [name, "", "", "", figure, target];
  console.log(
    `\n${SIGN_UPS} sign-ups × ${ROUNDS} rounds each, ${CONNECTIONS} connections, medians ` +
      "(the costs: of each round's ratio):\n\n" +
      table(
        ["", "without the rules", "a gate that does nothing", "all but the ceilings", "with them", "target"],
        [
          [
            "sign-ups a second",
            Math.round(rate(samples.without)).toString(),
            costed(samples.gateAlone),
            costed(samples.noCeilings),
            costed(samples.withRules),
            // Where every other rule alone already costs more, the ceilings' own bound is the one
            // that counts (bench/README.md).
            figures.allButTheCeilings > MAX_COST
              ? `the next row counts: the rest alone is over ${MAX_COST}×`
              : verdict(figures.cost <= MAX_COST, `≤ ${MAX_COST}×`),
          ],
          row(
            "the ceilings over all the rest",
            `${figures.ceilingsOverTheRest.toFixed(2)}×`,
            verdict(figures.ceilingsOverTheRest <= MAX_CEILINGS_SHARE, `≤ ${MAX_CEILINGS_SHARE}×`),
          ),
          ["p50", ...columns.map((runs) => ms(median(runs.map(({ p50 }) => p50)))), ""],
          ["p99", ...columns.map((runs) => ms(p99(runs))), ""],
          row(
            `p99 of ${AFTER_IDLE} before the idle spell, settled alike (no target)`,
            ms(beforeIdle.p99),
            "",
          ),
          row(
            `p99 of the first ${AFTER_IDLE} after an idle spell (${IDLE_BACKLOG.toLocaleString("en")} expired sources)`,
            ms(afterIdle.p99),
            verdict(afterIdle.p99 < MAX_P99_AFTER_IDLE_MS, `< ${MAX_P99_AFTER_IDLE_MS} ms`),
          ),
          row(
            "whole-table scans of the sources in those sign-ups",
            String(wholeTableScans),
            verdict(wholeTableScans === 0, "0"),
          ),
        ],
      ),
  );
  await writeResults("sign-up-rules", {
    signUps: SIGN_UPS,
    rounds: ROUNDS,
    connections: CONNECTIONS,
    figures,
    targets: {
      cost: MAX_COST,
      ceilingsOverTheRest: MAX_CEILINGS_SHARE,
      p99AfterIdleMs: MAX_P99_AFTER_IDLE_MS,
    },
    samples,
    beforeIdle,
    afterIdle,
  });
} finally {
  await cluster.close();
}
