// A message where the owner looks: under GitHub Actions (GITHUB_ACTIONS=true), a workflow command
// (`::error title=…::…`), which GitHub shows on the run's page and in its email, not only in the log;
// elsewhere, `error: …` as any command line tool says it; and a failure told both ways at once
// (an OwnerFailure's message and title, config/owner-failure.ts).
import { appendFileSync } from "node:fs";

export type Kind = "error" | "warning" | "notice";

/** Whether this process runs as a step of a GitHub Actions job. */
export const underActions = (env: NodeJS.ProcessEnv = process.env) => env.GITHUB_ACTIONS === "true";

/** A workflow command's data: `%`, CR and LF escaped (GitHub's toolkit, `escapeData`). */
const escapeData = (text: string) =>
  text.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");

/** A property's value (the title): `:` and `,` escaped too (`escapeProperty`). */
const escapeProperty = (text: string) => escapeData(text).replaceAll(":", "%3A").replaceAll(",", "%2C");

/** `::error title=Supabase project paused::The project at … is paused …` */
export function workflowCommand(kind: Kind, message: string, title?: string): string {
  const properties = title ? ` title=${escapeProperty(title)}` : "";
  return `::${kind}${properties}::${escapeData(message)}`;
}

/** The line to print: an annotation under Actions, else `error: message`. */
export function ownerLine(kind: Kind, message: string, title: string, env: NodeJS.ProcessEnv = process.env) {
  return underActions(env) ? workflowCommand(kind, message, title) : `${kind}: ${message}`;
}

/**
 * Tells the owner: the line on stderr, and under Actions the same as a section of the run's summary
 * (GITHUB_STEP_SUMMARY), which the run's page shows first.
 */
export function report(kind: Kind, message: string, title: string, env: NodeJS.ProcessEnv = process.env) {
  process.stderr.write(`${ownerLine(kind, message, title, env)}\n`);
  if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, `## ${title}\n\n${message}\n`);
}

/** Tells the owner of a failure, as `report` does. */
export const reportFailure = (message: string, title: string, env: NodeJS.ProcessEnv = process.env) =>
  report("error", message, title, env);
