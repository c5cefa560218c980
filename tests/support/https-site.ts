// A local site over HTTPS, standing in for the owner's live one: a page that sends sign-ups to a
// given Supabase address (as the built page names it, in its Content-Security-Policy), served with a
// self-signed certificate for localhost that openssl makes, valid for as many days as asked: 90,
// a few (near its end) or -1 (expired yesterday). Trust it with `ca` in this process, or with
// NODE_EXTRA_CA_CERTS=<certFile> in a process of its own.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The page as the build writes it, in what matters here: its CSP's connect-src. */
export const pageFor = (supabaseUrl: string) =>
  `<!doctype html><html><head><meta http-equiv="content-security-policy" content="default-src 'self'; ` +
  `connect-src 'self' ${new URL(supabaseUrl).origin}"></head><body><h1>The Future Awaits</h1></body></html>`;

export interface HttpsSite {
  /** `https://localhost:<port>` */
  url: string;
  /** The certificate, PEM: to trust it. */
  ca: string;
  /** The same, in a file: for NODE_EXTRA_CA_CERTS. */
  certFile: string;
  close(): Promise<void>;
}

/**
 * Serves `page` with `status` at every path, over HTTPS, with a certificate valid for `days` from
 * now (negative: already expired).
 */
export async function startHttpsSite({
  days,
  page,
  status = 200,
}: {
  days: number;
  page: string;
  status?: number;
}): Promise<HttpsSite> {
  const folder = mkdtempSync(join(tmpdir(), "https-site-"));
  const [key, request, certFile] = ["key.pem", "request.csr", "cert.pem"].map((name) => join(folder, name));
  const openssl = (args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  openssl([
    "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-out", request!,
  ]); // prettier-ignore
  // x509 -req signs the request with its own key: a self-signed certificate, whose days may be negative.
  openssl([
    "x509", "-req", "-in", request!, "-signkey", key!, "-days", String(days), "-copy_extensions", "copy",
    "-out", certFile!,
  ]); // prettier-ignore
  const ca = readFileSync(certFile!, "utf8");
  const server = createServer({ key: readFileSync(key!), cert: ca }, (_, response) =>
    response.writeHead(status, { "content-type": "text/html; charset=utf-8" }).end(page),
  );
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return {
    url: `https://localhost:${(server.address() as AddressInfo).port}`,
    ca,
    certFile: certFile!,
    close: async () => {
      server.closeAllConnections();
      await new Promise((closed) => server.close(closed));
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
