// Where the owner's command finds the sign-ups, and with which key. A real project: its URL and
// SUPABASE_SECRET_KEY (and, for `watch`'s check of the page's path, the page's own key,
// PUBLIC_SUPABASE_PUBLISHABLE_KEY). Locally, no configuration: the local keys, and the local
// Supabase that is already running (`npm start`, `npm run dev`, `npm run backend`), or else one
// started on the data folder for the length of the command, so that the folder keeps a single owner.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import {
  isLoopback,
  isSecretKey,
  jwtRole,
  readEnvironment,
  type Environment,
} from "../../config/environment.ts";
import { mayServeThisProject, runLocalSupabase } from "../run-local-supabase.ts";
import { DataFolderLockedError, holderOf } from "../local-supabase/database/data-folder.ts";
import type { LocalSupabase } from "../local-supabase/index.ts";
import { LOCAL_PUBLISHABLE_KEY, LOCAL_SECRET_KEY } from "../../config/local-supabase.ts";
import { readLocalSettings, type LocalSettings } from "../settings.ts";
import { OwnerCommandError, type Target } from "./failures.ts";

export interface Connection extends Target {
  client: SupabaseClient;
  /** Whether it is the local Supabase (no Supabase project, so no pausing). */
  local: boolean;
  /** The same project with the page's own key (publishable), as the page reaches it. */
  asThePage(): { client: SupabaseClient } & Target;
  /** Stops the backend the command started, if it did. */
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Abort each request after this long (a scheduled job must not hang on a project that never answers). */
  requestTimeoutMs?: number;
}

const SECRET_KEY_VARIABLE = "SUPABASE_SECRET_KEY";
const PUBLISHABLE_KEY_VARIABLE = "PUBLIC_SUPABASE_PUBLISHABLE_KEY";

/**
 * How long to wait for a process that holds the data folder but does not answer: a backend
 * starting, until it answers, or one stopping (`npm start` just stopped), until it lets go.
 */
const HOLDER_WAIT_MS = 30_000;

export async function connect(
  env: Environment = readEnvironment(),
  { requestTimeoutMs }: ConnectOptions = {},
): Promise<Connection> {
  const settings = readLocalSettings(env);
  const url = settings.supabaseUrl;
  const local = settings.usesLocalSupabase;
  const { key, keySource, role } = secretKey(env, local);
  if (new URL(url).protocol !== "https:" && !isLoopback(new URL(url))) {
    throw new OwnerCommandError(
      `PUBLIC_SUPABASE_URL (${url}) is not https: the secret key is not sent over an unencrypted connection.`,
      "Supabase address not https",
    );
  }
  const backend = local ? await localSupabase(settings) : null;
  const clientWith = (key: string) =>
    createClient(url, key, {
      auth: { persistSession: false, autoRefreshToken: false },
      global: requestTimeoutMs === undefined ? {} : { fetch: timedFetch(requestTimeoutMs) },
    });
  return {
    client: clientWith(key),
    url,
    keySource,
    role,
    local,
    asThePage: () => {
      const page = publishableKey(env, local);
      return { client: clientWith(page.key), url, ...page };
    },
    close: async () => void (await backend?.close()),
  };
}

/** fetch, each request aborted after `ms` (supabase-js sets no time limit of its own). */
function timedFetch(ms: number): typeof fetch {
  return (input, init) => {
    const timeout = AbortSignal.timeout(ms);
    return fetch(input, {
      ...init,
      signal: init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout,
    });
  };
}

/** The page's key: PUBLIC_SUPABASE_PUBLISHABLE_KEY, else (locally only) the local stack's own. */
function publishableKey(
  env: Environment,
  local: boolean,
): Pick<Target, "keySource" | "role"> & { key: string } {
  const key = env[PUBLISHABLE_KEY_VARIABLE];
  if (key === undefined) {
    if (local)
      return { key: LOCAL_PUBLISHABLE_KEY, keySource: "the local stack's publishable key", role: "anon" };
    throw new OwnerCommandError(
      `${PUBLISHABLE_KEY_VARIABLE} is not set: watch checks the page's sign-up path with the page's own key. ` +
        "Set it to the project's publishable key (sb_publishable_…, Project Settings → API Keys), the one the site is built with.",
      "Publishable key not set",
    );
  }
  if (isSecretKey(key)) {
    throw new OwnerCommandError(
      `${PUBLISHABLE_KEY_VARIABLE} holds a secret key, which the page must never carry: set it to the publishable ` +
        "key (sb_publishable_…), and if a site was built with the secret key, roll that key in the dashboard " +
        "(Project Settings → API Keys).",
      "Secret key in the publishable key's place",
    );
  }
  return { key, keySource: PUBLISHABLE_KEY_VARIABLE, role: "anon" };
}

/** The secret key: SUPABASE_SECRET_KEY, else (locally only) the local stack's own. */
function secretKey(env: Environment, local: boolean): Pick<Target, "keySource" | "role"> & { key: string } {
  const key = env[SECRET_KEY_VARIABLE];
  if (key === undefined) {
    if (local)
      return { key: LOCAL_SECRET_KEY, keySource: "the local stack's secret key", role: "service_role" };
    throw new OwnerCommandError(
      `${SECRET_KEY_VARIABLE} is not set. Copy the project's secret key (sb_secret_…) from the ` +
        "dashboard, Project Settings → API Keys, into .env or the environment; never into a PUBLIC_ variable.",
      "Secret key not set",
    );
  }
  if (!isSecretKey(key)) {
    const publishable = key.startsWith("sb_publishable_") || jwtRole(key) === "anon";
    throw new OwnerCommandError(
      `${SECRET_KEY_VARIABLE} holds ${publishable ? "a publishable key, which cannot read or remove sign-ups" : "no secret key"}: ` +
        "the owner's command needs the secret key (sb_secret_…, or a legacy service_role key), " +
        "from Project Settings → API Keys.",
      "Not a secret key",
    );
  }
  return { key, keySource: SECRET_KEY_VARIABLE, role: "service_role" };
}

/**
 * The local Supabase at the settings' URL: the one answering there, or one this process starts on
 * the data folder. While another process holds the folder without answering, this one waits, at
 * most HOLDER_WAIT_MS and saying so on stderr: for a backend still starting to answer (it is then
 * used), or for one stopping to let the folder go (it is then opened here).
 */
async function localSupabase(settings: LocalSettings): Promise<LocalSupabase | null> {
  const url = settings.supabaseUrl;
  if (await answers(url)) return thisProjects(settings);
  const deadline = Date.now() + HOLDER_WAIT_MS;
  for (let waited = false; ; waited = true) {
    let held: DataFolderLockedError;
    try {
      // Its log lines (migrations applied, requests) would mix with the data on stdout.
      return await runLocalSupabase(settings, () => {});
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EADDRINUSE" && (await answers(url)))
        return thisProjects(settings);
      if (!(error instanceof DataFolderLockedError)) throw error;
      held = error;
    }
    const { pid, command } = held.holder;
    if (!waited)
      process.stderr.write(
        `Process ${pid} (${command}) holds the data folder ${settings.dataDir} and does not answer at ${url}: ` +
          `waiting for it to answer, or to stop and let the folder go (at most ${HOLDER_WAIT_MS / 1000} s).\n`,
      );
    const outcome = await holderMoves(settings, deadline);
    if (outcome === "answers") return null;
    if (outcome === "still holds")
      throw new OwnerCommandError(
        `${held.message.split("\n")[0]} It neither answered at ${url} nor let the folder go within ` +
          `${HOLDER_WAIT_MS / 1000} s.`,
        "Local Supabase not answering",
      );
  }
}

/** What the data folder's holder does by `deadline`: answers, lets the folder go, or still holds it. */
async function holderMoves(
  settings: LocalSettings,
  deadline: number,
): Promise<"answers" | "lets go" | "still holds"> {
  while (Date.now() < deadline) {
    await new Promise((resume) => setTimeout(resume, 250));
    if (await answers(settings.supabaseUrl)) return "answers";
    if (holderOf(settings.dataDir) === null) return "lets go";
  }
  return "still holds";
}

/**
 * No backend (null: use the one answering at `url`) if it may be this project's; refused if it
 * cannot be, before anything is read or removed in the wrong list.
 */
function thisProjects(settings: LocalSettings): null {
  if (mayServeThisProject(settings)) return null;
  throw new OwnerCommandError(
    `A backend answers at ${settings.supabaseUrl}, but no process holds this project's data folder ` +
      `(${settings.dataDir}): it serves another folder or project, and its sign-ups are not these. ` +
      "Stop it, or set SUPABASE_API_PORT and SUPABASE_DATA_DIR to the backend you mean.",
    "Another project's backend",
  );
}

/** Whether anything answers HTTP at `url` (a refused connection means no backend runs there). */
async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/rest/v1/`, { signal: AbortSignal.timeout(5000) });
    await response.body?.cancel();
    return true;
  } catch {
    return false;
  }
}
