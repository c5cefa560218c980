// One deploy command: every message and document that tells the owner how to push the migrations
// runs the pinned CLI through the project's script, as DEPLOY_COMMAND (tools/supabase-cli.ts) says
// it; `npx supabase db push` would run an unpinned CLI, which without `--remote` pushes to the
// local database. The tools' messages take it from there; a document or a workflow that words it
// otherwise fails here, naming the file and the line.
import { describe, expect, it } from "vitest";
import { DEPLOY_COMMAND } from "../../tools/supabase-cli.ts";
import { files, read } from "./repository.ts";

/** A command that runs `db push`: through npx, npm, pnpm, yarn or bunx, up to the end of its line or code span. */
const PUSH = /\b(?:npx|npm|pnpm|yarn|bunx)\b[^`"'\n]*?\bdb push\b[^`"'\n]*/g;

/** What the owner reads: the documents, the tools' messages, the workflows. */
const owners = files.filter(
  (file) =>
    file.endsWith(".md") ||
    (file.startsWith("tools/") && file.endsWith(".ts")) ||
    file.startsWith(".github/workflows/"),
);

/** `file:line: command` for every push command, as written. */
const pushes = owners.flatMap((file) =>
  read(file)
    .split("\n")
    .flatMap((line, index) =>
      [...line.matchAll(PUSH)].map(([command]) => `${file}:${index + 1}: ${command}`),
    ),
);

describe(`the deploy command, ${DEPLOY_COMMAND}`, () => {
  it("is what the README tells the owner (the check itself works)", () => {
    expect(pushes.filter((push) => push.startsWith("README.md:"))).not.toEqual([]);
  });

  it("is how every document, message and workflow says to push", () => {
    const stale = pushes.filter((push) => !push.split(": ").slice(1).join(": ").startsWith(DEPLOY_COMMAND));
    expect(stale, stale.join("\n")).toEqual([]);
  });

  it("is what the tools' messages write, from its one place", () => {
    const written = owners
      .filter((file) => file.startsWith("tools/sign-ups/"))
      .filter((file) => /db push/.test(read(file)));
    expect(written, "a tool that spells the command out instead of importing DEPLOY_COMMAND").toEqual([]);
  });
});
