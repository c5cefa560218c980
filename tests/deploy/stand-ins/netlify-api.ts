// A stand-in for Netlify's API, as far as `netlify deploy --prod --no-build` (the pin in
// tools/deploy/hosts/netlify.ts) calls it for a folder of static files, and as that file reads
// the site. Only the host's API is faked: netlify-cli itself is the real one.
//
// netlify-cli reaches it through NETLIFY_API_URL: netlify-cli@27.10.2's
// dist/commands/base-command.js, lines 510-515 (scheme, host and path prefix of every API call;
// `/api/v1` when the address has no path), and the file uploads go to the same API
// (dist/utils/deploy/upload-files.js, `api.uploadDeployFile`). Its telemetry, the one other host,
// is sent only outside CI (dist/utils/telemetry/telemetry.js, `track`: `if (isCI) return`), so
// the host runs it with CI=true.
//
// What it keeps is Netlify's model: files by SHA-1, a deploy listing every path's digest that
// goes live only once every file it lacked is in, and the site's published deploy.
import { createHash, randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { startApiServer, uploadGate, type Answer, type ApiServer } from "./api-server.ts";

export interface NetlifyDeploy {
  id: string;
  /** Each file by its path as netlify-cli lists it (`index.html`), with its SHA-1. */
  files: Record<string, string>;
  /** The digests the site lacked when the deploy was made. */
  required: string[];
  state: "uploading" | "ready";
}

export interface NetlifyApi extends ApiServer {
  /** What netlify-cli's environment needs to call the stand-in: the API's address, and the extension API's. */
  env: NodeJS.ProcessEnv;
  /** Each file uploaded, in order. */
  uploads: { path: string; sha: string }[];
  deploys: NetlifyDeploy[];
  /** The deploy the site serves now. */
  published(): NetlifyDeploy | undefined;
  content(sha: string): Buffer;
  /** Accepts the next `count` file uploads, then refuses each (422); undefined: accepts all again. */
  failUploadsAfter(count: number | undefined): void;
}

export const SITE_ID = "5f1c2a9e-0b7d-4c3e-9a61-2d8f4b7e1c90";
export const SITE_NAME = "future-awaits-owner";
export const AUTH_TOKEN = "nfp_stand-in-token-never-printed";

const json = (status: number, body: unknown): Answer => ({ status, body });

export async function startNetlifyApi(): Promise<NetlifyApi> {
  const contents = new Map<string, Buffer>();
  const uploads: NetlifyApi["uploads"] = [];
  const deploys: NetlifyDeploy[] = [];
  let publishedId: string | undefined;
  const gate = uploadGate();

  const site = () => ({
    id: SITE_ID,
    site_id: SITE_ID,
    name: SITE_NAME,
    account_id: "owner-team",
    account_slug: "owner",
    url: `https://${SITE_NAME}.netlify.app`,
    ssl_url: `https://${SITE_NAME}.netlify.app`,
    admin_url: `https://app.netlify.com/projects/${SITE_NAME}`,
    published_deploy: publishedId ? { id: publishedId } : null,
    build_settings: {},
    feature_flags: {},
  });
  const deployBody = (deploy: NetlifyDeploy) => ({
    id: deploy.id,
    site_id: SITE_ID,
    state: deploy.state,
    required: deploy.required,
    required_functions: [],
    deploy_url: `https://${deploy.id}--${SITE_NAME}.netlify.app`,
    ssl_url: `https://${SITE_NAME}.netlify.app`,
    url: `https://${SITE_NAME}.netlify.app`,
    admin_url: `https://app.netlify.com/projects/${SITE_NAME}`,
  });

  const api: NetlifyApi = Object.assign(
    await startApiServer((request) => {
      const path = request.url.pathname.replace(/^\/api\/v1/, "");
      // The extension API's call (netlify-extensions.ts), with no token: this project has none.
      if (request.url.pathname.startsWith("/extensions/")) return json(200, []);
      if (request.token !== AUTH_TOKEN)
        return json(401, { code: 401, message: "Access Denied: Invalid token" });
      if (request.method === "GET" && path === "/accounts")
        return json(200, [{ id: "owner-team", slug: "owner" }]);
      if (request.method === "GET" && path === "/sites") return json(200, []);
      // The project's environment variables, which a deploy without a build does not use: none.
      if (request.method === "GET" && /^\/accounts\/[^/]+\/env$/.test(path)) return json(200, []);
      const onSite = path.match(/^\/sites\/([^/]+)(\/.*)?$/);
      if (onSite && onSite[1] !== SITE_ID) return json(404, { code: 404, message: "Not Found" });
      if (request.method === "GET" && onSite && !onSite[2]) return json(200, site());

      if (request.method === "POST" && onSite?.[2] === "/deploys") {
        const deploy: NetlifyDeploy = {
          id: randomUUID().replace(/-/g, "").slice(0, 24),
          files: {},
          required: [],
          state: "uploading",
        };
        deploys.push(deploy);
        return json(200, deployBody(deploy));
      }
      const deployOnSite = onSite?.[2]?.match(/^\/deploys\/([^/]+)(\/restore)?$/);
      const deploy = deployOnSite && deploys.find((candidate) => candidate.id === deployOnSite[1]);
      // The rollback: an older deploy published again.
      if (request.method === "POST" && deploy && deployOnSite[2] && deploy.state === "ready") {
        publishedId = deploy.id;
        return json(200, deployBody(deploy));
      }
      if (request.method === "PUT" && deploy && !deployOnSite[2]) {
        const { files } = JSON.parse(request.body.toString("utf8")) as { files: Record<string, string> };
        deploy.files = files;
        deploy.required = [...new Set(Object.values(files))].filter((sha) => !contents.has(sha));
        if (deploy.required.length === 0) deploy.state = "ready";
        return json(200, deployBody(deploy));
      }
      if (request.method === "GET" && deploy && !deployOnSite[2]) {
        // Live once every file is in: the deploy is published when ready, not before.
        if (deploy.state === "ready") publishedId = deploy.id;
        return json(200, deployBody(deploy));
      }

      const upload = path.match(/^\/deploys\/([^/]+)\/files(\/.*)$/);
      const uploadingTo = upload && deploys.find((candidate) => candidate.id === upload[1]);
      if (request.method === "PUT" && uploadingTo) {
        if (!gate.accepts()) return json(422, { code: 422, message: "The stand-in refuses this upload." });
        // Listed without the leading slash, uploaded under it.
        const file = decodeURI(upload[2]!).slice(1);
        const sha = createHash("sha1").update(request.body).digest("hex");
        if (uploadingTo.files[file] !== sha)
          return json(422, { code: 422, message: `${file}: not the digest listed` });
        contents.set(sha, request.body);
        uploads.push({ path: `/${file}`, sha });
        if (uploadingTo.required.every((required) => contents.has(required))) uploadingTo.state = "ready";
        return json(200, { id: sha, path: file, sha });
      }
      return undefined;
    }),
    {
      env: {},
      uploads,
      deploys,
      published: () => deploys.find((deploy) => deploy.id === publishedId),
      content: (sha: string) => contents.get(sha)!,
      failUploadsAfter: gate.failAfter,
    },
  );
  api.env = {
    NETLIFY_API_URL: api.url,
    NETLIFY_EXTENSIONS_URL: `${api.url}/extensions`,
    NODE_OPTIONS: `--import ${JSON.stringify(fileURLToPath(new URL("./netlify-extensions.ts", import.meta.url)))}`,
  };
  return api;
}
