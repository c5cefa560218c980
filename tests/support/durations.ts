// How long each Vitest file took in a full `npm test`: tests/durations.json, which orders the
// next runs' files (longest-first.ts). `npm run test:durations` writes it from a run's own times
// (project-times.ts), a run in which every test passed; nobody types a figure into it.
import { readFileSync, writeFileSync } from "node:fs";
import type { ProjectTimes } from "./project-times.ts";

const RECORD = new URL("../durations.json", import.meta.url);

/** Seconds per file, by project, then by the file's path from the root. */
export type Durations = Record<string, Record<string, number>>;

export function readDurations(): Durations {
  return JSON.parse(readFileSync(RECORD, "utf8")) as Durations;
}

/** The record of a run: each file's time, to a tenth of a second, in the order of their names. */
export function writeDurations(projects: Record<string, ProjectTimes>): void {
  const byName = <T>(entries: [string, T][]) => entries.sort(([a], [b]) => (a < b ? -1 : 1));
  const record: Durations = Object.fromEntries(
    byName(Object.entries(projects)).map(([project, { fileDurations }]) => [
      project,
      Object.fromEntries(
        byName(Object.entries(fileDurations)).map(([file, ms]) => [file, Math.round(ms / 100) / 10]),
      ),
    ]),
  );
  writeFileSync(RECORD, `${JSON.stringify(record, null, 2)}\n`);
}
