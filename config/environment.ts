// The project's settings as every command reads them: the process's own environment first, then
// the `.env` files Astro reads (`.env`, `.env.local`, `.env.<mode>`, `.env.<mode>.local`). The
// build (astro.config.mjs) and the tools (tools/) both read them here, so they always
// agree on where the site sends its sign-ups; the build's own checks are here too. An empty value counts as unset, so a variable in
// `.env` can be switched off from the command line (`SUPABASE_DB_URL= npm start`).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseEnv } from "node:util";
import { LOCAL_API_PORT } from "./local-supabase.ts";
import { OwnerFailure } from "./owner-failure.ts";

export type Environment = Readonly<Record<string, string | undefined>>;

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The site's address on this machine, which a build names when SITE_URL is not set. */
export const LOCAL_SITE_URL = "http://localhost:4321";

/** The addresses that mean "this machine". */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** A setting that makes no sense, and what to set instead: a failure of any command that reads it. */
export class ConfigurationError extends OwnerFailure {
  constructor(message: string) {
    super(message, "Settings refused");
  }
}

/**
 * The settings: the process's environment over the `.env` files, later files over earlier ones.
 * `npm run deploy` reads its own mode's (`.env.deploy`), in the project it runs in (`root`).
 */
export function readEnvironment(
  mode = process.env.NODE_ENV ?? "production",
  { root = ROOT, env = process.env }: { root?: string; env?: NodeJS.ProcessEnv } = {},
): Environment {
  // Vite's order (its loadEnv), which Astro follows; read here without loading Vite, which the
  // server processes do not otherwise need.
  const files = [".env", ".env.local", `.env.${mode}`, `.env.${mode}.local`];
  const fromFiles = files.map((file) => {
    try {
      return parseEnv(readFileSync(join(root, file), "utf8"));
    } catch {
      return {};
    }
  });
  const all = Object.assign({}, ...fromFiles, env) as Record<string, string | undefined>;
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined && value !== ""));
}

/** Where the local Supabase answers: SUPABASE_API_PORT, else the Supabase CLI's port. */
export function apiPort(env: Environment): number {
  return port(env, "SUPABASE_API_PORT", LOCAL_API_PORT);
}

/** The local Supabase's address, as the site's build must name it. */
function localSupabaseUrl(env: Environment): string {
  return `http://127.0.0.1:${apiPort(env)}`;
}

/**
 * Where the site sends sign-ups: PUBLIC_SUPABASE_URL, else the local Supabase. An address on
 * this machine that names another port than SUPABASE_API_PORT is refused when both are set: the
 * build would send sign-ups to whatever answers there while the backend listens elsewhere.
 */
export function supabaseUrl(env: Environment): string {
  const configured = env.PUBLIC_SUPABASE_URL;
  if (configured === undefined) return localSupabaseUrl(env);
  const url = parseUrl(configured, "PUBLIC_SUPABASE_URL", "https://<project-ref>.supabase.co");
  if (env.SUPABASE_API_PORT !== undefined && isLoopback(url) && urlPort(url) !== apiPort(env)) {
    throw new ConfigurationError(
      `PUBLIC_SUPABASE_URL (${configured}) and SUPABASE_API_PORT (${env.SUPABASE_API_PORT}) disagree: ` +
        "the site would send sign-ups to another port than the local Supabase answers on.\n" +
        "Set them to the same port, or leave PUBLIC_SUPABASE_URL out: it then follows SUPABASE_API_PORT.",
    );
  }
  return configured;
}

/**
 * The site's public address, which its canonical link, social cards and calendar event name:
 * SITE_URL. Without it a build names LOCAL_SITE_URL, which only a build whose sign-ups stay on
 * this machine may do: a build for a Supabase project elsewhere is refused, saying what to set.
 * The dev server and `astro check` (not `building`) never need it.
 */
export function siteUrl(env: Environment, { building = false } = {}): string {
  const configured = env.SITE_URL;
  if (configured !== undefined) {
    const url = parseUrl(configured, "SITE_URL", "https://example.com");
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw new ConfigurationError(
        `SITE_URL must be an http or https address, not ${JSON.stringify(configured)}.`,
      );
    }
    return configured;
  }
  const supabase = supabaseUrl(env);
  if (building && !isLoopback(new URL(supabase))) {
    throw new ConfigurationError(
      `SITE_URL is not set, and this build sends sign-ups to ${supabase}: its canonical link, social ` +
        `cards and calendar event would point at ${LOCAL_SITE_URL}.\n` +
        "Set SITE_URL to the site's public address, such as https://example.com: in .env, or in the " +
        "host's build settings next to PUBLIC_SUPABASE_URL and PUBLIC_SUPABASE_PUBLISHABLE_KEY.",
    );
  }
  return LOCAL_SITE_URL;
}

/** The prefix of today's Supabase secret keys (`sb_secret_…`), which act as `service_role`. */
const SECRET_KEY_PREFIX = "sb_secret_";

/**
 * Whether a key is one that bypasses row level security: a secret key, or a legacy JWT whose
 * `role` is `service_role`. Read without checking any signature: a key that merely claims the
 * role is no more fit to be published.
 */
export function isSecretKey(key: string): boolean {
  return key.startsWith(SECRET_KEY_PREFIX) || jwtRole(key) === "service_role";
}

/** The `role` claim of something shaped like a JWT, read without checking its signature; null for anything else. */
export function jwtRole(token: string): string | null {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  try {
    const role: unknown = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8"))?.role;
    return typeof role === "string" ? role : null;
  } catch {
    return null;
  }
}

/**
 * Every `PUBLIC_` variable is built into the pages that visitors download, so none may hold a
 * secret key: whoever reads the page could then read, change and delete every sign-up. Refused
 * for the build, the dev server and `astro check` alike, naming the variable, never its value.
 */
export function refuseSecretKeysInPublicVariables(env: Environment): void {
  const exposed = Object.entries(env)
    .filter(([name, value]) => name.startsWith("PUBLIC_") && value !== undefined && isSecretKey(value))
    .map(([name]) => name);
  if (exposed.length === 0) return;
  throw new ConfigurationError(
    `${exposed.join(" and ")} ${exposed.length === 1 ? "holds" : "hold"} a secret key, which would be ` +
      "built into the pages every visitor downloads.\n" +
      "PUBLIC_SUPABASE_PUBLISHABLE_KEY takes the publishable key (sb_publishable_…). The secret key " +
      "belongs in SUPABASE_SECRET_KEY, for `npm run sign-ups` only; if it has been published, " +
      "roll it in the dashboard (Project Settings → API Keys).",
  );
}

/** Whether the site's Supabase is the local Supabase (not a project elsewhere). */
export function usesLocalSupabase(env: Environment): boolean {
  const url = new URL(supabaseUrl(env));
  return isLoopback(url) && urlPort(url) === apiPort(env);
}

/** A port number from a variable, or its default; anything else is refused by name. */
export function port(env: Environment, name: string, fallback: number): number {
  const value = env[name];
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535) {
    throw new ConfigurationError(`${name} must be a port number (0–65535), not ${JSON.stringify(value)}.`);
  }
  return number;
}

function parseUrl(value: string, name: string, example: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new ConfigurationError(`${name} must be a URL such as ${example}, not ${JSON.stringify(value)}.`);
  }
}

/** Whether an address is on this machine. */
export const isLoopback = (url: URL) => LOOPBACK_HOSTS.has(url.hostname);

const urlPort = (url: URL) => Number(url.port || (url.protocol === "https:" ? 443 : 80));
