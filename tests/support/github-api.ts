// A stand-in for GitHub's REST API, as far as the workflows' steps call it (point a step at it with
// GITHUB_API_URL): the repository (public or private, its default branch), its latest commit, and
// enabling a workflow. Every request is recorded, with its token.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface GitHubApi {
  url: string;
  /** `PUT /repos/owner/repo/actions/workflows/watch.yml/enable`, with the bearer token. */
  requests: Array<{ method: string; path: string; token: string | undefined }>;
  close(): Promise<void>;
}

export interface Repository {
  /** `owner/repo` */
  name: string;
  private?: boolean;
  /** When its default branch's latest commit was made. */
  lastCommit: Date;
  /** What enabling a workflow answers: 204, or 403 for a token without `actions: write`. */
  enableStatus?: number;
}

export async function startGitHubApi(repository: Repository): Promise<GitHubApi> {
  const requests: GitHubApi["requests"] = [];
  const repo = `/repos/${repository.name}`;
  const server = createServer((request, response) => {
    const path = request.url!;
    requests.push({
      method: request.method!,
      path,
      token: request.headers.authorization?.replace(/^Bearer /, ""),
    });
    const json = (status: number, body: unknown) =>
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (request.method === "PUT" && /^\/repos\/[^/]+\/[^/]+\/actions\/workflows\/[^/]+\/enable$/.test(path)) {
      const status = repository.enableStatus ?? 204;
      if (status === 204) return void response.writeHead(204).end();
      return json(status, { message: "Resource not accessible by integration" });
    }
    if (request.method === "GET" && path === repo)
      return json(200, {
        full_name: repository.name,
        private: repository.private ?? false,
        default_branch: "main",
      });
    if (request.method === "GET" && path.startsWith(`${repo}/commits?`))
      return json(200, [
        { sha: "0".repeat(40), commit: { committer: { date: repository.lastCommit.toISOString() } } },
      ]);
    json(404, { message: "Not Found" });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((closed) => server.close(() => closed())),
  };
}

/** `days` days before now. */
export const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 60 * 60 * 1000);
