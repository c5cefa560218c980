// The deploy's look at the live site and its project from the outside, changing nothing: the
// watch's own checks of the page (tools/sign-ups/site.ts: 200, its certificate, `connect-src`
// naming the project), what the host must do beyond it (checkHosting: public/_headers, 404 for
// unknown paths, `/_astro/` cached for good), every migration of the repository in the project
// (when SUPABASE_DB_PUSH_URL is given), and the page's sign-up path (an address the database
// refuses). Every failure is told, each with what it means and what to do.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { OwnerFailure } from "../../config/owner-failure.ts";
import { checkHosting, checkSite } from "../sign-ups/site.ts";
import { parseHeadersFile } from "../static-host/headers-file.ts";
import { pendingMigrations, repositoryMigrations } from "./migrations.ts";
import { checkPagePath } from "./supabase.ts";

export interface CheckTarget {
  siteUrl: string;
  supabaseUrl: string;
  publishableKey: string;
  /** The database's connection string: without it, the migrations are not checked. */
  dbUrl?: string;
}

export interface Verdict {
  passed: string[];
  skipped: string[];
  failures: OwnerFailure[];
}

/** Runs every check against `target`, side by side; the repository at `root` says what is expected. */
export async function checkLive(
  root: string,
  { siteUrl, supabaseUrl, publishableKey, dbUrl }: CheckTarget,
  env: NodeJS.ProcessEnv,
): Promise<Verdict> {
  const rules = parseHeadersFile(readFileSync(join(root, "public", "_headers"), "utf8"));
  const checks: Array<[passed: string, check: () => Promise<OwnerFailure[]>]> = [
    [
      `${siteUrl} answers 200 and sends sign-ups to ${new URL(supabaseUrl).origin}`,
      async () => (await checkSite(siteUrl, supabaseUrl, { now: new Date() }), []),
    ],
    [
      "the host sends public/_headers, answers unknown paths 404 with 404.html, and caches /_astro/ for good",
      () => checkHosting(siteUrl, rules),
    ],
    [
      "the page's sign-up path answers as it must (a test address refused, nothing stored)",
      async () => (await checkPagePath(supabaseUrl, publishableKey), []),
    ],
  ];
  if (dbUrl)
    checks.push([
      `the project has every migration of the repository (${repositoryMigrations(root).length})`,
      async () => {
        const pending = await pendingMigrations(root, dbUrl, env);
        if (pending.length === 0) return [];
        return [
          new OwnerFailure(
            `The project lacks ${pending.length} of the repository's migrations (${pending.join(", ")}): the page's ` +
              "sign-ups may fail or skip its rules. Apply them: npm run deploy (it lists them first).",
            "Migrations missing",
          ),
        ];
      },
    ]);
  // Each check's failures, in the order above, whatever order they end in.
  const outcomes = await Promise.all(
    checks.map(([, check]) =>
      check().catch((error: unknown) => {
        if (!(error instanceof OwnerFailure)) throw error;
        return [error];
      }),
    ),
  );
  return {
    passed: checks.filter((_, i) => outcomes[i]!.length === 0).map(([passed]) => passed),
    skipped: dbUrl ? [] : ["the project's migrations: SUPABASE_DB_PUSH_URL is not set"],
    failures: outcomes.flat(),
  };
}

/** The verdict for the owner: what passed, what was skipped, each failure and its fix. */
export function describeVerdict({ passed, skipped, failures }: Verdict, rollback?: string): string {
  const lines = [
    ...passed.map((line) => `  ✓ ${line}`),
    ...skipped.map((line) => `  - skipped: ${line}`),
    ...failures.map((failure) => `  ✗ ${failure.title}: ${failure.message}`),
  ];
  if (failures.length > 0 && rollback) lines.push(`\n  To put the previous version back: ${rollback}`);
  return `${lines.join("\n")}\n`;
}
