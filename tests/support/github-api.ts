// A stand-in for GitHub's REST API (point a step or `npm run deploy -- --github` at it with
// GITHUB_API_URL), as far as this project calls it: the repository (public or private, its
// default branch) and that branch's latest commit, read with the job's token; its environments,
// read back as GitHub shows them; and, for the owner's token alone, what `--github` sets up:
// environments with their reviewers and branch policies, secrets sealed to the repository's or an
// environment's public key (each opened here with the key pair only this stand-in holds, as GitHub
// would), and variables. A private repository's plan decides what it may have, as GitHub's docs
// ("Managing environments for deployment") say: on GitHub Free no environment at all, on Pro or
// Team environments with branch policies but no required reviewers. GitHub's exact status and
// words for such a refusal are not documented; the stand-in answers 422 with a message. Every
// request is recorded, with its token.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import nacl from "tweetnacl";
import { openSealed } from "../../tools/deploy/sealed-box.ts";

export interface Environment {
  /** Logins of its required reviewers. */
  reviewers: string[];
  /** Names of the branches its policy allows; null: any branch. */
  branches: string[] | null;
}

export interface GitHubApi {
  url: string;
  /** `GET /repos/owner/repo/commits/main`, with the bearer token. */
  requests: Array<{ method: string; path: string; token: string | undefined }>;
  /** Secrets as opened here, by `NAME` (the repository's) or `environment/NAME`; null for one that did not open. */
  secrets: Record<string, string | null>;
  variables: Record<string, string>;
  environments: Record<string, Environment>;
  close(): Promise<void>;
}

export interface Repository {
  /** `owner/repo` */
  name: string;
  private?: boolean;
  /** The plan of a private repository's owner: what its environments may hold. */
  plan?: "free" | "pro";
  /** When its default branch's latest commit was made. */
  lastCommit: Date;
  environments?: Record<string, Environment>;
  /** Secrets set before, by name (their values are not GitHub's to give back). */
  secrets?: string[];
  /** The owner's tokens, and whose each is: only they may change the repository. */
  owners?: Record<string, { login: string; id: number }>;
}

const DEFAULT_BRANCH = "main";

export async function startGitHubApi(repository: Repository): Promise<GitHubApi> {
  const requests: GitHubApi["requests"] = [];
  const repo = `/repos/${repository.name}`;
  const environments: Record<string, Environment> = structuredClone(repository.environments ?? {});
  const secrets: GitHubApi["secrets"] = Object.fromEntries(
    (repository.secrets ?? []).map((name) => [name, "(set before)"]),
  );
  const variables: Record<string, string> = {};
  const keys = new Map<string, nacl.BoxKeyPair>();
  const keyOf = (scope: string) => keys.get(scope) ?? keys.set(scope, nacl.box.keyPair()).get(scope)!;
  const owners = repository.owners ?? {};
  const plan = repository.private ? (repository.plan ?? "free") : "public";

  const server = createServer((request, response) => {
    const path = request.url!;
    const method = request.method!;
    const token = request.headers.authorization?.replace(/^Bearer /, "");
    requests.push({ method, path, token });
    const json = (status: number, body?: unknown) =>
      response
        .writeHead(status, { "content-type": "application/json" })
        .end(body === undefined ? "" : JSON.stringify(body));
    let text = "";
    request.on("data", (chunk: Buffer) => (text += chunk));
    request.on("end", () => {
      const body = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
      const owner = token === undefined ? undefined : owners[token];
      const match = (pattern: RegExp) => pattern.exec(path);
      if (method === "GET" && path === "/user")
        return owner ? json(200, owner) : json(401, { message: "Bad credentials" });
      if (method === "GET" && path === repo)
        return json(200, {
          full_name: repository.name,
          private: repository.private ?? false,
          visibility: repository.private ? "private" : "public",
          default_branch: DEFAULT_BRANCH,
          permissions: { admin: owner !== undefined },
        });
      if (method === "GET" && path === `${repo}/commits/${DEFAULT_BRANCH}`)
        return json(200, {
          sha: "0".repeat(40),
          commit: { committer: { date: repository.lastCommit.toISOString() } },
        });
      const environment = match(new RegExp(`^${repo}/environments/([^/]+)$`));
      if (method === "GET" && environment) {
        const found = environments[decodeURIComponent(environment[1]!)];
        if (!found) return json(404, { message: "Not Found" });
        return json(200, {
          name: decodeURIComponent(environment[1]!),
          protection_rules: [
            ...(found.reviewers.length > 0
              ? [
                  {
                    type: "required_reviewers",
                    reviewers: found.reviewers.map((login) => ({ type: "User", reviewer: { login } })),
                  },
                ]
              : []),
            ...(found.branches ? [{ type: "branch_policy" }] : []),
          ],
          deployment_branch_policy: found.branches
            ? { protected_branches: false, custom_branch_policies: true }
            : null,
        });
      }
      const policies = match(new RegExp(`^${repo}/environments/([^/]+)/deployment-branch-policies$`));
      if (policies) {
        const found = environments[decodeURIComponent(policies[1]!)];
        if (!found?.branches) return json(404, { message: "Not Found" });
        if (method === "GET")
          return json(200, {
            total_count: found.branches.length,
            branch_policies: found.branches.map((name, id) => ({ id, name, type: "branch" })),
          });
      }
      // Everything below changes the repository: the owner's token alone.
      if (!owner) return json(401, { message: "Bad credentials" });
      if (method === "PUT" && environment) {
        if (plan === "free")
          return json(422, { message: "Environments are not available for this private repository's plan." });
        const reviewers = (body.reviewers as unknown[] | undefined) ?? [];
        if (plan === "pro" && reviewers.length > 0)
          return json(422, {
            message: "Required reviewers are not available for this private repository's plan.",
          });
        const policy = body.deployment_branch_policy as
          { custom_branch_policies?: boolean } | null | undefined;
        const name = decodeURIComponent(environment[1]!);
        environments[name] = {
          reviewers: (reviewers as Array<{ id: number }>).map(
            ({ id }) => Object.values(owners).find((user) => user.id === id)!.login,
          ),
          branches: policy?.custom_branch_policies ? (environments[name]?.branches ?? []) : null,
        };
        return json(200, { name });
      }
      if (policies && method === "POST") {
        const found = environments[decodeURIComponent(policies[1]!)];
        if (!found?.branches) return json(404, { message: "Not Found" });
        found.branches.push(String(body.name));
        return json(200, { name: body.name, type: "branch" });
      }
      const publicKey = match(
        new RegExp(`^${repo}(?:/environments/([^/]+))?/(?:actions/)?secrets/public-key$`),
      );
      if (method === "GET" && publicKey) {
        const scope = publicKey[1] ? decodeURIComponent(publicKey[1]) : "";
        if (scope && !environments[scope]) return json(404, { message: "Not Found" });
        return json(200, {
          key_id: `key-${scope || "repository"}`,
          key: Buffer.from(keyOf(scope).publicKey).toString("base64"),
        });
      }
      const secret = match(new RegExp(`^${repo}(?:/environments/([^/]+))?/(?:actions/)?secrets/([A-Z_]+)$`));
      if (secret) {
        const scope = secret[1] ? decodeURIComponent(secret[1]) : "";
        const name = scope ? `${scope}/${secret[2]}` : secret[2]!;
        if (method === "DELETE") {
          if (!(name in secrets)) return json(404, { message: "Not Found" });
          delete secrets[name];
          return json(204);
        }
        if (method === "PUT") {
          if (body.key_id !== `key-${scope || "repository"}`) return json(422, { message: "Bad key_id" });
          const opened = openSealed(String(body.encrypted_value), keyOf(scope));
          if (opened === null) return json(422, { message: "Bad encrypted value" });
          const created = !(name in secrets);
          secrets[name] = opened;
          return json(created ? 201 : 204);
        }
      }
      const variable = match(new RegExp(`^${repo}/actions/variables(?:/([A-Z_]+))?$`));
      if (variable) {
        const name = variable[1] ?? String(body.name);
        if (method === "PATCH" && variable[1]) {
          if (!(name in variables)) return json(404, { message: "Not Found" });
          variables[name] = String(body.value);
          return json(204);
        }
        if (method === "POST" && !variable[1]) {
          if (name in variables) return json(409, { message: "Already exists" });
          variables[name] = String(body.value);
          return json(201);
        }
      }
      json(404, { message: "Not Found" });
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    secrets,
    variables,
    environments,
    close: () => new Promise((closed) => server.close(() => closed())),
  };
}

/** `days` days before now. */
export const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 60 * 60 * 1000);
