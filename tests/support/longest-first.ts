// The order Vitest starts the run's files in: the longest first, whatever their project, so that
// the run does not end on one long file started last. Vitest's own order runs the projects one
// after another, in the order of their names: the owner's command's files (`sign-ups`, 100 s for
// one of them) started after every database and local Supabase file, and the run waited on them
// alone at its end. A file's length is Vitest's record of its last run where there is one (not in
// a fresh clone), else the figure below, else its size, as Vitest's own order uses.
import { stat } from "node:fs/promises";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The longest files of a run on the 2-core machine, in seconds (a fresh clone's `npm test`,
 * 2026-11-29, the machine otherwise idle; the longer of a file's two majors; the ceilings' two
 * files measured alone): a guide to the order, not a limit.
 */
const SECONDS: Record<string, number> = {
  "tests/sign-ups/owner-command.test.ts": 94,
  "tests/isolation/beside-npm-start.test.ts": 58,
  "tests/local-supabase/process.test.ts": 52,
  "tests/database/ceilings.test.ts": 35,
  "tests/database/deploy.test.ts": 27,
  "tests/database/crowds.test.ts": 18,
  "tests/database/attempts.test.ts": 15,
  "tests/sign-ups/watch.test.ts": 10,
  "tests/workflows/watch-workflow.test.ts": 9,
  "tests/local-supabase/read-back.test.ts": 9,
  "tests/database/sign-up-limits.test.ts": 7,
  "tests/workflows/migrations-workflow.test.ts": 6,
  "tests/site/build/change-the-launch.test.ts": 4,
};

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const length = new Map<TestSpecification, number>();
    await Promise.all(
      files.map(async (file) => {
        const known = this.ctx.cache.getTestSpecificationResult(file)?.duration;
        const hint = SECONDS[relative(this.ctx.config.root, file.moduleId)];
        // A file's size in bytes, as a hundredth of a millisecond a byte: below every figure.
        const size = await stat(file.moduleId).then(
          ({ size }) => size / 100,
          () => 0,
        );
        length.set(file, known ?? (hint === undefined ? size : hint * 1000));
      }),
    );
    return [...files].sort((a, b) => length.get(b)! - length.get(a)!);
  }
}
