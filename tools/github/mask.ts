// `… 2>&1 | node tools/github/mask.ts`: what the Supabase CLI prints, with the database's connection
// string (SUPABASE_DB_PUSH_URL) and its password masked, before it reaches a log, an annotation or a
// summary. GitHub masks a secret where its exact value appears, not a part of it: the password
// alone, or percent-decoded as the CLI may print it, would show. Under Actions it also asks the
// runner (`::add-mask::`) to mask those parts in every later line of the job.
import { underActions } from "./annotations.ts";

const MASK = "***";

/** The connection string and its password, as written and as decoded: longest first, each once. */
export function secretParts(url: string | undefined): string[] {
  if (!url) return [];
  const parts = [url];
  try {
    const { password } = new URL(url);
    if (password) parts.push(password, decodeURIComponent(password));
  } catch {
    // Not a URL: only the whole string is known to be secret.
  }
  return [...new Set(parts)].sort((a, b) => b.length - a.length);
}

/** `text` with each of `secrets` (an empty one is none) replaced by `***`. */
export function blanked(text: string, secrets: string[]): string {
  return secrets.filter(Boolean).reduce((result, secret) => result.replaceAll(secret, MASK), text);
}

/** `text` with every secret part of `url` replaced by `***`. */
export function masked(text: string, url: string | undefined): string {
  return blanked(text, secretParts(url));
}

/** Under Actions, asks the runner to mask the parts of `url` it cannot know (the whole string it masks already). */
export function maskInLaterLines(url: string | undefined, env: NodeJS.ProcessEnv = process.env): void {
  if (underActions(env))
    for (const part of secretParts(url).slice(1)) process.stdout.write(`::add-mask::${part}\n`);
}

if (import.meta.main) {
  const url = process.env.SUPABASE_DB_PUSH_URL;
  maskInLaterLines(url);
  let pending = "";
  process.stdin.setEncoding("utf8");
  // Line by line, so that no secret is cut in two between chunks.
  process.stdin.on("data", (chunk: string) => {
    const lines = (pending + chunk).split("\n");
    pending = lines.pop()!;
    for (const line of lines) process.stdout.write(`${masked(line, url)}\n`);
  });
  process.stdin.on("end", () => pending && process.stdout.write(masked(pending, url)));
}
