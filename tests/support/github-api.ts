// A stand-in for GitHub's REST API, as far as the workflows' steps call it (point a step at it with
// GITHUB_API_URL): the repository (public or private, its default branch) and that branch's latest
// commit, read with the job's token. Every request is recorded, with its token.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface GitHubApi {
  url: string;
  /** `GET /repos/owner/repo/commits/main`, with the bearer token. */
  requests: Array<{ method: string; path: string; token: string | undefined }>;
  close(): Promise<void>;
}

export interface Repository {
  /** `owner/repo` */
  name: string;
  private?: boolean;
  /** When its default branch's latest commit was made. */
  lastCommit: Date;
}

const DEFAULT_BRANCH = "main";

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
    if (request.method === "GET" && path === repo)
      return json(200, {
        full_name: repository.name,
        private: repository.private ?? false,
        visibility: repository.private ? "private" : "public",
        default_branch: DEFAULT_BRANCH,
      });
    if (request.method === "GET" && path === `${repo}/commits/${DEFAULT_BRANCH}`)
      return json(200, {
        sha: "0".repeat(40),
        commit: { committer: { date: repository.lastCommit.toISOString() } },
      });
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
