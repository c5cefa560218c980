// A stand-in for Cloudflare's API, as far as `wrangler deploy` (tools/deploy/hosts/cloudflare.ts's
// pin) calls it for a Worker of static assets alone, and as tools/deploy/hosts/cloudflare.ts
// asks for the account's workers.dev subdomain. Only the hosts' APIs are faked in the deploy's
// tests: wrangler itself is the real one.
//
// wrangler reaches it through CLOUDFLARE_API_BASE_URL: wrangler@4.168.0's
// wrangler-dist/cli.js, line 10036 (`getCloudflareApiBaseUrlFromEnv`, variableName
// "CLOUDFLARE_API_BASE_URL") and line 10039 (the base of every API call, else
// https://api.cloudflare.com/client/v4); the asset uploads go to the same base (line 61922,
// `/accounts/<id>/workers/assets/upload`), with the session's token. Its telemetry, the one other
// host a deploy calls, is off with WRANGLER_SEND_METRICS=false (line 10009).
//
// What it keeps is Cloudflare's model: files by content hash, a version of the Worker made by
// its upload (the files' manifest, `_headers` in the assets' configuration), and the live one.
import { randomUUID } from "node:crypto";
import { formData, startApiServer, uploadGate, type Answer, type ApiServer } from "./api-server.ts";

export interface WorkerVersion {
  id: string;
  /** Each file of the version by its path (`/index.html`), with its content hash. */
  manifest: Record<string, string>;
  /** The assets' configuration as wrangler sent it: `not_found_handling`, `_headers`' text. */
  config: { not_found_handling?: string; html_handling?: string; _headers?: string };
}

export interface CloudflareApi extends ApiServer {
  /** Each file uploaded, in order, by its path in the session that asked for it. */
  uploads: { path: string; hash: string }[];
  /** Every version made, oldest first. */
  versions: WorkerVersion[];
  /** The version the Worker serves now. */
  live(): WorkerVersion | undefined;
  /** A file's content, by hash, as uploaded. */
  content(hash: string): Buffer;
  /** Accepts the next `count` uploads of files, then answers each with 500 (a host failing half-way); undefined: accepts all again. */
  failUploadsAfter(count: number | undefined): void;
}

export const ACCOUNT_ID = "0123456789abcdef0123456789abcdef";
export const API_TOKEN = "cf-stand-in-token-never-printed";
export const SUBDOMAIN = "owner";

const ok = (result: unknown, status = 200): Answer => ({
  status,
  body: { success: true, errors: [], messages: [], result },
});
const error = (status: number, code: number, message: string, headers?: Record<string, string>): Answer => ({
  status,
  headers,
  body: { success: false, errors: [{ code, message }], messages: [], result: null },
});

/** A token shaped as Cloudflare's (wrangler reads its claims), valid for an hour. */
function jwt(claims: object): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none" })}.${part({ ...claims, exp: Math.floor(Date.now() / 1000) + 3600 })}.stand-in`;
}

export async function startCloudflareApi(): Promise<CloudflareApi> {
  const contents = new Map<string, Buffer>();
  /** Upload sessions by their token: the manifest sent, the hashes still missing, the completion token. */
  const sessions = new Map<
    string,
    { manifest: Record<string, string>; missing: Set<string>; done: string }
  >();
  const completed = new Map<string, Record<string, string>>();
  const uploads: CloudflareApi["uploads"] = [];
  const versions: WorkerVersion[] = [];
  /** Each deployment, oldest first: the last one's version is live. */
  const deployments: {
    id: string;
    source: string;
    strategy: string;
    created_on: string;
    versions: object[];
  }[] = [];
  const deploy = (versionId: string) => {
    const deployment = {
      id: randomUUID(),
      source: "wrangler",
      strategy: "percentage",
      created_on: new Date().toISOString(),
      versions: [{ version_id: versionId, percentage: 100 }],
    };
    deployments.push(deployment);
    return deployment;
  };
  const liveId = () => (deployments.at(-1)?.versions[0] as { version_id: string } | undefined)?.version_id;
  let workersDev = false;
  const gate = uploadGate();

  const api: CloudflareApi = Object.assign(
    await startApiServer(async (request) => {
      const path = request.url.pathname.replace(/^\/client\/v4/, "");
      // The asset uploads carry the session's token, every other call the owner's.
      const upload = path === `/accounts/${ACCOUNT_ID}/workers/assets/upload`;
      if (path === "/user/tokens/verify" && request.token !== API_TOKEN)
        return error(401, 1000, "Invalid API Token");
      if (!upload && request.token !== API_TOKEN) return error(403, 10000, "Authentication error");
      // What wrangler asks to explain a refusal (its whoami): the token is good, or not.
      if (path === "/user/tokens/verify") return ok({ id: "stand-in", status: "active" });
      if (path === "/memberships") return ok([{ account: { id: ACCOUNT_ID, name: "Owner" } }]);
      const account = path.match(/^\/accounts\/([^/]+)(\/.*)$/);
      if (!account) return undefined;
      if (account[1] !== ACCOUNT_ID)
        return error(404, 7003, "Could not route to /accounts, perhaps your object identifier is invalid?");
      const [, , rest] = account;
      const worker = rest!.match(/^\/workers\/(?:services|scripts|workers)\/([^/]+)(\/.*)?$/);

      if (request.method === "GET" && rest === "/workers/subdomain") return ok({ subdomain: SUBDOMAIN });

      if (request.method === "GET" && worker && !worker[2] && rest!.startsWith("/workers/services/"))
        return liveId()
          ? ok({
              id: worker[1],
              default_environment: { environment: "production", script: { id: worker[1], tag: "t" } },
            })
          : error(404, 10090, "This Worker does not exist on your account.");

      if (request.method === "GET" && worker?.[2] === "/deployments")
        return deployments.length > 0
          ? ok({ deployments: [...deployments].reverse() })
          : error(404, 10007, "This Worker does not exist on your account.");

      if (request.method === "POST" && worker?.[2] === "/assets-upload-session") {
        const { manifest } = JSON.parse(request.body.toString("utf8")) as {
          manifest: Record<string, { hash: string }>;
        };
        const byPath = Object.fromEntries(Object.entries(manifest).map(([file, { hash }]) => [file, hash]));
        const missing = new Set(Object.values(byPath).filter((hash) => !contents.has(hash)));
        const done = jwt({ completion: randomUUID() });
        completed.set(done, byPath);
        if (missing.size === 0) return ok({ jwt: done, buckets: [] });
        const token = jwt({ session: randomUUID() });
        sessions.set(token, { manifest: byPath, missing, done });
        // One file a bucket, so that a failure can fall between two files.
        return ok({ jwt: token, buckets: [...missing].map((hash) => [hash]) });
      }

      if (request.method === "POST" && upload) {
        const session = sessions.get(request.token ?? "");
        if (!session) return error(401, 10000, "Authentication error: not an upload session's token");
        if (!gate.accepts())
          // Retry-After: 0 lets wrangler retry at once (it retries five times) instead of waiting 31 s.
          return error(500, 10013, "An unknown error has occurred", { "retry-after": "0" });
        for (const [hash, value] of (await formData(request)).entries()) {
          contents.set(hash, Buffer.from(await (value as File).text(), "base64"));
          session.missing.delete(hash);
          const file = Object.entries(session.manifest).find(([, fileHash]) => fileHash === hash)![0];
          uploads.push({ path: file, hash });
        }
        return ok(session.missing.size === 0 ? { jwt: session.done } : {}, 201);
      }

      // A new version: made by the Worker's first upload (and made live), later by /versions and
      // made live by a deployment.
      const first = request.method === "PUT" && worker && !worker[2] && rest!.startsWith("/workers/scripts/");
      if (first || (request.method === "POST" && worker?.[2] === "/versions")) {
        const metadata = JSON.parse(String((await formData(request)).get("metadata"))) as {
          assets: { jwt: string; config: WorkerVersion["config"] };
        };
        const manifest = completed.get(metadata.assets.jwt);
        if (!manifest) return error(400, 10200, "The assets' completion token is not valid.");
        const version = { id: randomUUID(), manifest, config: metadata.assets.config };
        versions.push(version);
        if (!first)
          return ok({ id: version.id, resources: { script: { etag: version.id } }, startup_time_ms: 0 });
        deploy(version.id);
        return ok({ id: worker[1], etag: version.id, deployment_id: version.id, startup_time_ms: 0 });
      }

      if (request.method === "POST" && worker?.[2] === "/deployments") {
        const { versions: traffic } = JSON.parse(request.body.toString("utf8")) as {
          versions: { version_id: string; percentage: number }[];
        };
        const [whole] = traffic.filter((entry) => entry.percentage === 100);
        if (!whole || !versions.some((version) => version.id === whole.version_id))
          return error(400, 10219, "A deployment names one known version at 100%.");
        return ok(deploy(whole.version_id));
      }

      if (request.method === "PATCH" && worker?.[2] === "/script-settings") return ok({});

      // What `wrangler rollback` shows of the version it makes live again.
      const shown = worker?.[2]?.match(/^\/versions\/([^/]+)$/);
      const index = shown ? versions.findIndex((version) => version.id === shown[1]) : -1;
      if (request.method === "GET" && index >= 0)
        return ok({
          id: versions[index]!.id,
          number: index + 1,
          metadata: {
            created_on: new Date().toISOString(),
            source: "wrangler",
            author_email: "owner@example.com",
          },
          annotations: {},
          resources: { script: { handlers: [] }, bindings: [] },
        });

      // workers.dev: the Worker's own switch, read (GET …/workers/workers/<name>), and turned on
      // (POST …/scripts/<name>/subdomain) at its first deploy.
      if (request.method === "GET" && rest!.startsWith("/workers/workers/") && !worker?.[2])
        return ok({ subdomain: { enabled: workersDev, previews_enabled: false } });
      if (request.method === "POST" && worker?.[2] === "/subdomain") {
        workersDev = (JSON.parse(request.body.toString("utf8")) as { enabled: boolean }).enabled;
        return ok({ enabled: workersDev, previews_enabled: false });
      }
      return undefined;
    }),
    {
      uploads,
      versions,
      live: () => versions.find((version) => version.id === liveId()),
      content: (hash: string) => contents.get(hash)!,
      failUploadsAfter: gate.failAfter,
    },
  );
  return api;
}
