// A private nginx for one test file, serving a build with the repository's deploy/nginx.conf: the
// file's server block unchanged but for where it listens and what it serves, inside a minimal
// main configuration whose every path (pid, logs, temporary files) is in a temporary folder.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { freePorts } from "../test-environment.ts";

/** The server block the README tells hosts to use. */
export const SERVER_BLOCK_FILE = join(import.meta.dirname, "../../deploy/nginx.conf");

export const INSTALL_HINT = "install nginx (Debian/Ubuntu: `sudo apt-get install nginx-light`)";

/** The nginx binary: on the PATH, or where Debian puts it (/usr/sbin, not on a user's PATH). */
export function findNginx(): string | null {
  const onPath = spawnSync("sh", ["-c", "command -v nginx"], { encoding: "utf8" }).stdout.trim();
  if (onPath) return onPath;
  return existsSync("/usr/sbin/nginx") ? "/usr/sbin/nginx" : null;
}

/** The mime.types beside the configuration nginx was built to read (`nginx -V`: --conf-path). */
function mimeTypesFile(nginx: string): string {
  const { stderr } = spawnSync(nginx, ["-V"], { encoding: "utf8" });
  const confPath = /--conf-path=(\S+)/.exec(stderr)?.[1] ?? "/etc/nginx/nginx.conf";
  return join(dirname(confPath), "mime.types");
}

/** `text` with `pattern` replaced, which must match exactly once (else the file has changed shape). */
function replaceOnce(text: string, pattern: RegExp, replacement: string): string {
  const matches = text.match(new RegExp(pattern, "gm"))?.length ?? 0;
  if (matches !== 1) throw new Error(`${SERVER_BLOCK_FILE}: ${pattern} matches ${matches} lines, not 1`);
  return text.replace(new RegExp(pattern, "m"), replacement);
}

export interface NginxServer {
  url: string;
  stop(): Promise<void>;
}

/** nginx serving `root` with the repository's server block, on a free port of 127.0.0.1. */
export async function startNginx(nginx: string, root: string): Promise<NginxServer> {
  const prefix = mkdtempSync(join(tmpdir(), "nginx-"));
  const [port] = freePorts(1) as [number];
  let server = readFileSync(SERVER_BLOCK_FILE, "utf8");
  server = replaceOnce(server, /^(\s*)listen 80;$/, `$1listen 127.0.0.1:${port};`);
  server = replaceOnce(server, /^\s*listen \[::\]:80;$/, "");
  server = replaceOnce(server, /^(\s*)root \S+;$/, `$1root ${root};`);
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((kind) => `${kind}_temp_path ${join(prefix, kind)};`)
    .join("\n  ");
  writeFileSync(
    join(prefix, "nginx.conf"),
    // As root, nginx's workers would run as `nobody`, who cannot read the tests' private folders.
    `${process.getuid?.() === 0 ? "user root;" : ""}
worker_processes 1;
pid ${join(prefix, "nginx.pid")};
error_log stderr warn;
events { worker_connections 64; }
http {
  include ${mimeTypesFile(nginx)};
  default_type application/octet-stream;
  access_log off;
  ${temp}
${server}
}
`,
  );

  const child = spawn(nginx, ["-p", prefix, "-c", join(prefix, "nginx.conf"), "-g", "daemon off;"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr.on("data", (chunk: Buffer) => (log += chunk));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    child.kill("SIGQUIT"); // nginx's graceful shutdown
    await exited;
    rmSync(prefix, { recursive: true, force: true });
  };

  // Ready once it answers; a configuration it refuses ends it at once, with its reason.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (
      await fetch(url).then(
        () => true,
        () => false,
      )
    )
      return { url, stop };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await stop();
  throw new Error(`nginx did not start:\n${log}`);
}
