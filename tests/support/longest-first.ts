// The order Vitest starts the run's files in: the longest first, whatever their project, so that
// the run does not end on one long file started last. Vitest's own order runs the projects one
// after another, in the order of their names: the owner's command's files (`sign-ups`, the longest
// of them) started after every database and local Supabase file, and the run waited on them alone
// at its end. A file's length is its time in the record of a full run (tests/durations.json, which
// `npm run test:durations` writes), the same on every machine, a fresh clone's included; a file
// the record does not know yet goes first, as it may be a long one.
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { readDurations } from "./durations.ts";

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = readDurations();
    const length = (file: TestSpecification) =>
      durations[file.project.name]?.[relative(this.ctx.config.root, file.moduleId)] ?? Infinity;
    return [...files].sort((a, b) => length(b) - length(a) || 0);
  }
}
