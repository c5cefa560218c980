// A stand-in for Vercel's API, as far as `vercel deploy --prebuilt --prod` (the pin in
// tools/deploy/hosts/vercel.ts) calls it for a build of static files, and as that file reads the
// project. Only the host's API is faked: the vercel CLI itself is the real one.
//
// The CLI reaches it through its `--api` flag: vercel@58.10.0's dist/index.js, lines 1744-1745
// (`apiUrl = parsedArgs.flags["--api"]`, the base of every call, the file uploads included). Its
// telemetry is off with VERCEL_TELEMETRY_DISABLED (dist/index.js, line 1349), its update check
// with NO_UPDATE_NOTIFIER (line 1473).
//
// What it keeps is Vercel's model: files by SHA-1, a deployment made only when every file it
// lists is in (else `missing_files`, which the CLI uploads and asks again), and the project's
// production deployment.
import { createHash, randomUUID } from "node:crypto";
import { startApiServer, uploadGate, type Answer, type ApiServer } from "./api-server.ts";

export interface VercelDeployment {
  id: string;
  /** Each file by its path as the CLI lists it (`static/index.html`, `config.json`), with its SHA-1. */
  files: Record<string, string>;
}

export interface VercelApi extends ApiServer {
  /** Each file uploaded, in order, by SHA-1. */
  uploads: string[];
  deployments: VercelDeployment[];
  /** The project's production deployment. */
  production(): VercelDeployment | undefined;
  content(sha: string): Buffer;
  /** Accepts the next `count` file uploads, then refuses each (400); undefined: accepts all again. */
  failUploadsAfter(count: number | undefined): void;
}

export const TEAM_ID = "team_standin0000000000000000";
export const PROJECT_ID = "prj_standin00000000000000000000";
export const PROJECT_NAME = "future-awaits";
export const TOKEN = "vercelStandInTokenNeverPrinted0";

const json = (status: number, body: unknown): Answer => ({ status, body });
const error = (status: number, code: string, message: string, more: object = {}): Answer =>
  json(status, { error: { code, message, ...more } });

export async function startVercelApi(): Promise<VercelApi> {
  const contents = new Map<string, Buffer>();
  const uploads: string[] = [];
  const deployments: VercelDeployment[] = [];
  let productionId: string | undefined;
  const gate = uploadGate();

  const project = () => ({
    id: PROJECT_ID,
    name: PROJECT_NAME,
    accountId: TEAM_ID,
    framework: null,
    targets: productionId ? { production: { id: productionId } } : {},
  });
  const deploymentBody = (deployment: VercelDeployment) => ({
    id: deployment.id,
    url: `${PROJECT_NAME}-${deployment.id.slice(4, 13)}.vercel.app`,
    name: PROJECT_NAME,
    projectId: PROJECT_ID,
    ownerId: TEAM_ID,
    target: "production",
    readyState: "READY",
    status: "READY",
    aliasAssigned: true,
    alias: [`${PROJECT_NAME}.vercel.app`],
    createdAt: Date.now(),
    inspectorUrl: `https://vercel.com/owner/${PROJECT_NAME}/${deployment.id}`,
  });

  return Object.assign(
    await startApiServer((request) => {
      const path = request.url.pathname;
      if (request.token !== TOKEN) return error(403, "forbidden", "Not authorized", { invalidToken: true });
      if (request.method === "GET" && /^\/v\d+\/user$/.test(path))
        return json(200, { user: { id: "user_owner", username: "owner", defaultTeamId: TEAM_ID } });
      if (request.method === "GET" && new RegExp(`^(/v\\d+)?/teams/${TEAM_ID}$`).test(path))
        return json(200, { id: TEAM_ID, slug: "owner", name: "Owner" });
      const onProject = path.match(/^\/v\d+\/projects\/([^/]+)$/);
      if (request.method === "GET" && onProject)
        return onProject[1] === PROJECT_ID || onProject[1] === PROJECT_NAME
          ? json(200, project())
          : error(404, "not_found", "Project not found");

      if (request.method === "POST" && /^\/v\d+\/files$/.test(path)) {
        if (!gate.accepts()) return error(400, "upload_refused", "The stand-in refuses this upload.");
        const sha = createHash("sha1").update(request.body).digest("hex");
        if (sha !== request.headers["x-now-digest"] && sha !== request.headers["x-vercel-digest"])
          return error(400, "digest_mismatch", "The file is not the digest named");
        contents.set(sha, request.body);
        uploads.push(sha);
        return json(200, {});
      }

      if (request.method === "POST" && /^\/v\d+\/deployments$/.test(path)) {
        const body = JSON.parse(request.body.toString("utf8")) as { files: { file: string; sha: string }[] };
        const missing = [...new Set(body.files.map((file) => file.sha))].filter((sha) => !contents.has(sha));
        if (missing.length > 0) return error(400, "missing_files", "Missing files", { missing });
        // Made only now, every file in; production at once, as `--prod` asks.
        const deployment = {
          id: `dpl_${randomUUID().replace(/-/g, "")}`,
          files: Object.fromEntries(body.files.map((file) => [file.file, file.sha])),
        };
        deployments.push(deployment);
        productionId = deployment.id;
        return json(200, deploymentBody(deployment));
      }
      const onDeployment = path.match(/^\/v\d+\/deployments\/([^/]+)$/);
      const deployment = onDeployment && deployments.find((candidate) => candidate.id === onDeployment[1]);
      if (request.method === "GET" && deployment) return json(200, deploymentBody(deployment));
      return undefined;
    }),
    {
      uploads,
      deployments,
      production: () => deployments.find((deployment) => deployment.id === productionId),
      content: (sha: string) => contents.get(sha)!,
      failUploadsAfter: gate.failAfter,
    },
  );
}
