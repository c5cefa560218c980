// GitHub's REST API, as this project's tools call it: the workflows' steps with the job's token
// (inactivity.ts, review.ts) and `npm run deploy -- --github` with the owner's
// (tools/deploy/github.ts). GITHUB_API_URL says where it answers, as GitHub's own tools read it
// (GitHub Enterprise, and the tests' stand-in); api.github.com otherwise.
import { OwnerFailure } from "../../config/owner-failure.ts";

export const apiUrl = (env: NodeJS.ProcessEnv) =>
  (env.GITHUB_API_URL || "https://api.github.com").replace(/\/$/, "");

export interface Answer<T = unknown> {
  status: number;
  body: T;
}

/** One call: its answer whatever the status (the caller decides what a 404 means); an unreachable API throws. */
export type Call = <T = unknown>(method: string, path: string, body?: unknown) => Promise<Answer<T>>;

export function githubCall(api: string, token: string): Call {
  return async <T>(method: string, path: string, body?: unknown) => {
    const response = await fetch(`${api}${path}`, {
      method,
      headers: {
        accept: "application/vnd.github+json",
        authorization: `Bearer ${token}`,
        "x-github-api-version": "2022-11-28",
        "user-agent": "future-awaits",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    }).catch((error: Error) => {
      throw new OwnerFailure(
        `Cannot reach GitHub's API at ${api} (${String(error.cause ?? error.message)}).`,
        "GitHub's API unreachable",
      );
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON (a proxy's page): kept as text for the message.
    }
    return { status: response.status, body: parsed as T };
  };
}

/** GitHub's own words for a refusal, short: its `message`, or the start of what it sent. */
export function said(answer: Answer): string {
  const message = (answer.body as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : String(answer.body).slice(0, 200);
}

/** The failure for an answer that is not 2xx: `GitHub's API answered GET /repos/… with 403 (Resource not accessible…)`. */
export const refused = (method: string, path: string, answer: Answer) =>
  new OwnerFailure(
    `GitHub's API answered ${method} ${path} with ${answer.status} (${said(answer)}).`,
    "GitHub's API refused",
  );

/** The body of a 2xx answer, else the failure. */
export async function ok<T>(call: Call, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await call<T>(method, path, body);
  if (answer.status < 200 || answer.status > 299) throw refused(method, path, answer as Answer);
  return answer.body;
}
