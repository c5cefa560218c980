// What `npm run deploy` needs, by the names the build, the workflows and the hosts' own CLIs
// already use: from the process's environment, then `.env.deploy`, then `.env` (both git-ignored).
// On a terminal, each missing one is asked for, saying where to find it, a secret without echo,
// and kept in `.env.deploy` for the next run (never in a tracked file: the file is written only
// when git ignores it). Without a terminal (`--yes`, CI) every missing one is named at once.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { readEnvironment } from "../../config/environment.ts";
import { OwnerFailure } from "../../config/owner-failure.ts";

/** Where asked settings are kept: git-ignored (`.env.*`), and read by no build (Astro reads `.env.<mode>`). */
export const SETTINGS_FILE = ".env.deploy";

/** One setting the command may need. */
export interface Setting {
  name: string;
  /** Asked without echo, never printed, and the file that keeps it readable by its owner alone. */
  secret: boolean;
  /** Where the owner finds it: the dashboard's page and field. */
  where: string;
  /** The value taken when none is given (never asked for then): a name the owner may keep. */
  default?: string;
  /** Why a value is refused, or null: checked on every value, whether given or typed. */
  refuse?: (value: string) => string | null;
}

/** A setting missing or refused, or the settings file not ignored by git. */
export class SettingsError extends OwnerFailure {
  constructor(message: string) {
    super(message, "Deploy settings");
  }
}

/**
 * The settings as given: the environment over `.env.deploy` over `.env` (and their `.local`
 * twins), read as the build reads its own mode's (config/environment.ts); an empty value is unset.
 */
export function givenSettings(root: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return readEnvironment("deploy", { root, env }) as Record<string, string>;
}

export interface Asker {
  /** Asks one question on the terminal; `secret` hides what is typed. */
  ask(question: string, secret: boolean): Promise<string>;
}

/**
 * The values of `wanted`, from `given` or asked (when `asker` is given), every value checked.
 * Asked ones are kept in SETTINGS_FILE. Without an asker, every missing or refused one is named in
 * one failure, with where to find it.
 */
export async function resolveSettings(
  wanted: Setting[],
  given: Record<string, string>,
  { root, asker }: { root: string; asker?: Asker },
): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  const problems: string[] = [];
  const asked: Record<string, string> = {};
  for (const setting of wanted) {
    let value: string | undefined = given[setting.name] ?? setting.default;
    let refused = value === undefined ? null : (setting.refuse?.(value) ?? null);
    while (asker && (value === undefined || refused)) {
      if (refused) console.error(`  ${setting.name}: ${refused}`);
      value = (await asker.ask(`${setting.name} (${setting.where}): `, setting.secret)).trim() || undefined;
      refused = value === undefined ? `${setting.name} is needed.` : (setting.refuse?.(value) ?? null);
      if (value !== undefined && !refused) asked[setting.name] = value;
    }
    if (value === undefined) problems.push(`${setting.name}: not set (${setting.where})`);
    else if (refused) problems.push(`${setting.name}: ${refused}`);
    else values[setting.name] = value;
  }
  if (problems.length > 0)
    throw new SettingsError(
      `Settings missing or refused, in the environment or ${SETTINGS_FILE}:\n  ${problems.join("\n  ")}`,
    );
  if (Object.keys(asked).length > 0) keep(root, asked);
  return values;
}

/** Adds `values` to SETTINGS_FILE (readable by its owner alone), once git is shown to ignore it. */
function keep(root: string, values: Record<string, string>): void {
  const ignored = spawnSync("git", ["check-ignore", "-q", SETTINGS_FILE], { cwd: root }).status === 0;
  if (!ignored) {
    console.error(
      `  ${SETTINGS_FILE} is not ignored by git here, so what you typed is not kept: set it in the environment next time.`,
    );
    return;
  }
  const path = join(root, SETTINGS_FILE);
  const kept = (existsSync(path) ? parseEnv(readFileSync(path, "utf8")) : {}) as Record<string, string>;
  const lines = Object.entries({ ...kept, ...values }).map(([name, value]) => `${name}=${quoted(value)}`);
  writeFileSync(
    path,
    `# npm run deploy's settings (git-ignored; delete to be asked again)\n${lines.join("\n")}\n`,
    {
      mode: 0o600,
    },
  );
  chmodSync(path, 0o600);
}

/** A value as a .env file holds it whole: in the first of ', ", ` it does not contain (dotenv's quotes, read verbatim). */
export function quoted(value: string): string {
  const quote = ["'", '"', "`"].find((mark) => !value.includes(mark));
  if (!quote || value.includes("\n"))
    throw new SettingsError(
      "A setting holds a line break or all three quotes: set it in the environment instead.",
    );
  return `${quote}${value}${quote}`;
}
