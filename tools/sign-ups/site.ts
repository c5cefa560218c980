// The watch's look at the site itself (SITE_URL), as a visitor reaches it: its certificate (read
// with Node's tls, whatever its state), then its page, which must answer 200 and send sign-ups to
// the project the watch reads (the page's Content-Security-Policy names that origin in `connect-src`,
// and the form's directive carries it). Each failure is an OwnerCommandError with a title.
import { get as httpGet, type IncomingMessage } from "node:http";
import { get as httpsGet } from "node:https";
import { connect, type PeerCertificate } from "node:tls";
import { OwnerCommandError } from "./failures.ts";

/** Fewer days than this left on the certificate: a warning, time to see why it is not renewed. */
export const CERTIFICATE_WARNING_DAYS = 14;

const DAY_MS = 24 * 60 * 60 * 1000;

/** How long each request may take. */
const TIMEOUT_MS = 30_000;

/** How the site answered. */
export interface SiteAnswer {
  url: string;
  status: number;
  /** Its certificate's end, and the whole days left; null over plain HTTP. */
  certificate: { validTo: Date; daysLeft: number } | null;
  /** What the owner should see to before it fails (a certificate near its end). */
  warnings: Array<{ title: string; message: string }>;
}

export interface SiteOptions {
  now: Date;
  /** Certificates to trust besides the system's (the tests' own); Node reads NODE_EXTRA_CA_CERTS too. */
  ca?: string;
}

/** Checks the site at `siteUrl`, which must send sign-ups to `supabaseUrl`. */
export async function checkSite(
  siteUrl: string,
  supabaseUrl: string,
  { now, ca }: SiteOptions,
): Promise<SiteAnswer> {
  const url = new URL(siteUrl);
  const warnings: SiteAnswer["warnings"] = [];
  let certificate: SiteAnswer["certificate"] = null;
  if (url.protocol === "https:") {
    const { validTo, error } = await readCertificate(url, ca);
    const daysLeft = Math.floor((validTo.getTime() - now.getTime()) / DAY_MS);
    if (error === "CERT_HAS_EXPIRED" || validTo.getTime() <= now.getTime()) {
      throw new OwnerCommandError(
        `The site's certificate at ${url.origin} expired on ${day(validTo)}: browsers refuse the page. Renew it ` +
          "(certbot renew, or the host's SSL settings), and see why it was not renewed on its own.",
        "Site certificate expired",
      );
    }
    if (error) {
      throw new OwnerCommandError(
        `The site's certificate at ${url.origin} is not trusted (${error}): browsers refuse the page. Check that ` +
          `it names ${url.hostname} and is issued by a public authority (the host's SSL settings, or certbot).`,
        "Site certificate not trusted",
      );
    }
    certificate = { validTo, daysLeft };
    if (daysLeft < CERTIFICATE_WARNING_DAYS) {
      warnings.push({
        title: "Site certificate ends soon",
        message:
          `The site's certificate at ${url.origin} ends on ${day(validTo)}, in ${daysLeft} ${daysLeft === 1 ? "day" : "days"}: ` +
          "it should have been renewed by now (certbot renews 30 days before). Renew it, and see why it was not.",
      });
    }
  }
  const { status, body } = await fetchPage(url, ca);
  if (status !== 200) {
    throw new OwnerCommandError(
      `The site at ${siteUrl} answered ${status}, not 200: visitors do not see the page. Check the host ` +
        "(its deploys, its logs) and that SITE_URL is the site's address.",
      "Site down",
    );
  }
  const expected = new URL(supabaseUrl).origin;
  if (!body.includes(expected)) {
    const named = /connect-src([^;"]*)/.exec(body)?.[1]?.trim();
    throw new OwnerCommandError(
      `The site at ${siteUrl} does not send sign-ups to ${expected}, the project this job reads` +
        (named ? ` (its page connects to ${named})` : "") +
        ": build it again with PUBLIC_SUPABASE_URL and PUBLIC_SUPABASE_PUBLISHABLE_KEY of this project, and deploy it.",
      "Site on another project",
    );
  }
  return { url: siteUrl, status, certificate, warnings };
}

/** `2026-12-03` */
const day = (date: Date) => date.toISOString().slice(0, 10);

/** The certificate the site presents, read whatever its state, and why it is not trusted (an OpenSSL code), if it is not. */
function readCertificate(url: URL, ca: string | undefined): Promise<{ validTo: Date; error: string | null }> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: url.hostname,
      port: Number(url.port || 443),
      servername: url.hostname,
      ca: ca === undefined ? undefined : [ca],
      rejectUnauthorized: false,
      timeout: TIMEOUT_MS,
    });
    socket.once("secureConnect", () => {
      const certificate: PeerCertificate = socket.getPeerCertificate();
      const error = socket.authorized ? null : String(socket.authorizationError);
      socket.end();
      resolve({ validTo: new Date(certificate.valid_to), error });
    });
    socket.once("timeout", () => socket.destroy(new Error("no answer in time")));
    socket.once("error", (error) => reject(unreachable(url, error)));
  });
}

/** The page, following up to 5 redirects (http → https, a trailing slash). */
async function fetchPage(
  url: URL,
  ca: string | undefined,
  redirects = 5,
): Promise<{ status: number; body: string }> {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const get = url.protocol === "https:" ? httpsGet : httpGet;
    const request = get(url, { ca: ca === undefined ? undefined : [ca], timeout: TIMEOUT_MS }, resolve);
    request.once("timeout", () => request.destroy(new Error("no answer in time")));
    request.once("error", (error) => reject(unreachable(url, error)));
  });
  const location = response.headers.location;
  if (response.statusCode! >= 300 && response.statusCode! < 400 && location && redirects > 0) {
    response.resume();
    return fetchPage(new URL(location, url), ca, redirects - 1);
  }
  let body = "";
  response.setEncoding("utf8");
  for await (const chunk of response) body += chunk;
  return { status: response.statusCode!, body };
}

function unreachable(url: URL, error: Error): OwnerCommandError {
  const code = (error as NodeJS.ErrnoException).code;
  return new OwnerCommandError(
    `Cannot reach the site at ${url.origin} (${code ?? error.message}): visitors cannot either. Check the host, ` +
      "the domain's DNS, and that SITE_URL is the site's address.",
    "Site unreachable",
  );
}
