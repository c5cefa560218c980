// Every workflow stays within GitHub's rules and asks for no more than it uses: nothing enables a
// workflow (GitHub stops a public repository's schedules after 60 days without activity, and the
// watch tells the owner instead: tools/github/inactivity.ts), no job may write to Actions (which
// could also delete the backups' artifacts), and each workflow grants nothing beyond reading the
// repository unless a job asks for it.
import { describe, expect, it } from "vitest";
import { readWorkflow, workflowFiles } from "./workflow.ts";

const workflows = workflowFiles().map((file) => ({ file, ...readWorkflow(file) }));

describe("GitHub's rules", () => {
  it("has the workflows to check", () => {
    expect(workflows.map(({ file }) => file)).toEqual(
      expect.arrayContaining(["migrations.yml", "watch.yml"]),
    );
  });

  it.each(workflows)("$file: no step enables a workflow", ({ jobs }) => {
    const scripts = Object.values(jobs).flatMap((job) => job.steps.flatMap((step) => step.run ?? []));
    expect(scripts.filter((script) => /workflows\/[^/\s]+\/enable|workflow enable/.test(script))).toEqual([]);
  });

  it.each(workflows)(
    "$file: grants no more than reading by default, and Actions to no job",
    ({ permissions, jobs }) => {
      expect([{}, { contents: "read" }]).toContainEqual(permissions);
      for (const job of Object.values(jobs)) expect(job.permissions?.actions).toBeUndefined();
    },
  );
});
