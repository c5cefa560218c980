// A Vitest reporter for `npm test` (tests/run.ts): per project, its tests by state, the time its
// files took, each and added up, and its span from its first file's start to its last file's end
// (files of several projects run side by side). Written as JSON to the file VITEST_PROJECT_TIMES names.
import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

export interface ProjectTimes {
  files: number;
  passed: number;
  failed: number;
  skipped: number;
  /** The files' own durations (set-up, import and tests), added up, in ms. */
  fileMs: number;
  /** Each file's, by its path from the root. */
  fileDurations: Record<string, number>;
  /** From the first file's start to the last file's end, in ms since 1970. */
  start: number;
  end: number;
}

export default class ProjectTimesReporter implements Reporter {
  private readonly started = new Map<string, number>();

  onTestModuleStart(module: TestModule): void {
    this.started.set(module.id, Date.now());
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const output = process.env.VITEST_PROJECT_TIMES;
    if (!output) return;
    const projects: Record<string, ProjectTimes> = {};
    const now = Date.now();
    for (const module of modules) {
      const project = (projects[module.project.name] ??= {
        files: 0,
        passed: 0,
        failed: 0,
        skipped: 0,
        fileMs: 0,
        fileDurations: {},
        start: Infinity,
        end: 0,
      });
      const { duration, setupDuration, collectDuration, prepareDuration, environmentSetupDuration } =
        module.diagnostic();
      const ms = duration + setupDuration + collectDuration + prepareDuration + environmentSetupDuration;
      const start = this.started.get(module.id) ?? now - ms;
      project.files++;
      project.fileMs += ms;
      project.fileDurations[relative(module.project.config.root, module.moduleId)] = ms;
      project.start = Math.min(project.start, start);
      project.end = Math.max(project.end, start + ms);
      for (const test of module.children.allTests()) {
        const { state } = test.result();
        if (state === "passed") project.passed++;
        else if (state === "failed") project.failed++;
        else project.skipped++;
      }
    }
    writeFileSync(output, JSON.stringify(projects, null, 2));
  }
}
