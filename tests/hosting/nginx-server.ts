// A private nginx for one test file, serving a build with the repository's deploy/nginx.conf: the
// file unchanged but for where it listens, which certificate it presents (a throwaway one, made
// here with openssl) and what it serves, inside a minimal main configuration whose every path
// (pid, logs, temporary files) is in a temporary folder.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { freePorts } from "../../tools/processes.ts";

/** The configuration the README tells hosts to use. */
export const SERVER_BLOCK_FILE = join(import.meta.dirname, "../../deploy/nginx.conf");

/** The name the file serves, which a host replaces with the site's. */
export const SERVER_NAME = "example.com";

export const INSTALL_HINT =
  "install nginx and openssl (Debian/Ubuntu: `sudo apt-get install nginx-light openssl`)";

/** A program on the PATH, or where Debian puts it (/usr/sbin is not on a user's PATH). */
export function findProgram(name: string): string | null {
  const onPath = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).stdout.trim();
  if (onPath) return onPath;
  for (const folder of ["/usr/sbin", "/usr/bin"])
    if (existsSync(join(folder, name))) return join(folder, name);
  return null;
}

/** nginx and openssl, or null when either is missing. */
export function findNginx(): { nginx: string; openssl: string } | null {
  const nginx = findProgram("nginx");
  const openssl = findProgram("openssl");
  return nginx && openssl ? { nginx, openssl } : null;
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

/** A self-signed certificate for SERVER_NAME and 127.0.0.1, valid for a day, made in `folder`. */
function throwawayCertificate(openssl: string, folder: string): { cert: string; key: string } {
  const cert = join(folder, "fullchain.pem");
  const key = join(folder, "privkey.pem");
  const made = spawnSync(
    openssl,
    [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"],
      ...["-days", "1", "-subj", `/CN=${SERVER_NAME}`],
      ...["-addext", `subjectAltName=DNS:${SERVER_NAME},IP:127.0.0.1`],
      ...["-keyout", key, "-out", cert],
    ],
    { encoding: "utf8" },
  );
  if (made.status !== 0) throw new Error(`openssl could not make a certificate:\n${made.stderr}`);
  return { cert, key };
}

/**
 * deploy/nginx.conf with the certificate's paths replaced, and, when `ports` are given, where it
 * listens and what it serves; inside a main configuration whose paths are all in `prefix`.
 */
function configuration(
  nginx: string,
  prefix: string,
  certificate: { cert: string; key: string },
  serve?: { root: string; http: number; https: number },
): string {
  let site = readFileSync(SERVER_BLOCK_FILE, "utf8");
  site = replaceOnce(site, /^(\s*)ssl_certificate \S+;$/, `$1ssl_certificate ${certificate.cert};`);
  site = replaceOnce(site, /^(\s*)ssl_certificate_key \S+;$/, `$1ssl_certificate_key ${certificate.key};`);
  if (serve) {
    site = replaceOnce(site, /^(\s*)listen 80;$/, `$1listen 127.0.0.1:${serve.http};`);
    site = replaceOnce(site, /^\s*listen \[::\]:80;$/, "");
    site = replaceOnce(site, /^(\s*)listen 443 (.*);$/, `$1listen 127.0.0.1:${serve.https} $2;`);
    site = replaceOnce(site, /^\s*listen \[::\]:443 .*;$/, "");
    site = replaceOnce(site, /^(\s*)root \S+;$/, `$1root ${serve.root};`);
  }
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((kind) => `${kind}_temp_path ${join(prefix, kind)};`)
    .join("\n  ");
  // As root, nginx's workers would run as `nobody`, who cannot read the tests' private folders.
  return `${process.getuid?.() === 0 ? "user root;" : ""}
worker_processes 1;
pid ${join(prefix, "nginx.pid")};
error_log stderr warn;
events { worker_connections 64; }
http {
  include ${mimeTypesFile(nginx)};
  default_type application/octet-stream;
  access_log off;
  ${temp}
${site}
}
`;
}

/**
 * `nginx -t` on deploy/nginx.conf exactly as shipped (its ports, names and root), but for the
 * certificate's paths, which name a throwaway certificate: what a host runs once certbot has made
 * the real one. Returns nginx's verdict and output.
 */
export function testShippedFile({ nginx, openssl }: { nginx: string; openssl: string }): {
  ok: boolean;
  output: string;
} {
  const prefix = mkdtempSync(join(tmpdir(), "nginx-t-"));
  try {
    writeFileSync(
      join(prefix, "nginx.conf"),
      configuration(nginx, prefix, throwawayCertificate(openssl, prefix)),
    );
    const { status, stderr } = spawnSync(nginx, ["-t", "-p", prefix, "-c", join(prefix, "nginx.conf")], {
      encoding: "utf8",
    });
    return { ok: status === 0, output: stderr };
  } finally {
    rmSync(prefix, { recursive: true, force: true });
  }
}

export interface NginxServer {
  /** The plain HTTP server, which sends everything to HTTPS. */
  httpUrl: string;
  /** The site, over HTTPS. */
  httpsUrl: string;
  /** The throwaway certificate it presents, to trust it in a request (PEM). */
  ca: string;
  stop(): Promise<void>;
}

/** nginx serving `root` with the repository's configuration, on free ports of 127.0.0.1. */
export async function startNginx(
  { nginx, openssl }: { nginx: string; openssl: string },
  root: string,
): Promise<NginxServer> {
  const prefix = mkdtempSync(join(tmpdir(), "nginx-"));
  const [http, https] = freePorts(2) as [number, number];
  const certificate = throwawayCertificate(openssl, prefix);
  writeFileSync(join(prefix, "nginx.conf"), configuration(nginx, prefix, certificate, { root, http, https }));

  const child = spawn(nginx, ["-p", prefix, "-c", join(prefix, "nginx.conf"), "-g", "daemon off;"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr.on("data", (chunk: Buffer) => (log += chunk));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const server = {
    httpUrl: `http://127.0.0.1:${http}`,
    httpsUrl: `https://127.0.0.1:${https}`,
    ca: readFileSync(certificate.cert, "utf8"),
    stop: async () => {
      child.kill("SIGQUIT"); // nginx's graceful shutdown
      await exited;
      rmSync(prefix, { recursive: true, force: true });
    },
  };

  // Ready once it answers; a configuration it refuses ends it at once, with its reason.
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (
      await fetch(server.httpUrl, { redirect: "manual" }).then(
        () => true,
        () => false,
      )
    )
      return server;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await server.stop();
  throw new Error(`nginx did not start:\n${log}`);
}
