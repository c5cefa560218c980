// The watch's look at the site itself (SITE_URL), as a visitor reaches it: its certificate (read
// with Node's tls, whatever its state), then its page, which must answer 200 and send sign-ups to
// the project the watch reads (the page's Content-Security-Policy names that origin in `connect-src`,
// and the form's directive carries it); and, for the deploy, what its host must do beyond that
// (checkHosting). Each failure is an OwnerCommandError with a title.
import { get as httpGet, type IncomingMessage } from "node:http";
import { get as httpsGet } from "node:https";
import { connect, type PeerCertificate } from "node:tls";
import { headersFor, type HeaderRule } from "../static-host/headers-file.ts";
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

/** A path no site has, so that the host's answer for an unknown path shows. */
export const UNKNOWN_PATH = "/deploy-check-no-such-page";

/**
 * What a static host must do beyond serving the page (the deploy's checks, tools/deploy/checks.ts):
 * send every header `rules` (public/_headers) gives `/`; answer a path the site does not have with
 * 404 and the site's own 404 page, not the home page of a single-page fallback; serve a file of
 * `/_astro/` (named after its content) with the caching `rules` give it. Every failure is told, not
 * only the first: one OwnerCommandError a problem.
 */
export async function checkHosting(siteUrl: string, rules: HeaderRule[]): Promise<OwnerCommandError[]> {
  // Certificates beyond the system's come from NODE_EXTRA_CA_CERTS, which Node reads itself.
  const at = (path: string) => fetchPage(new URL(path, siteUrl), undefined);
  const [home, unknown, notFound] = await Promise.all([at("/"), at(UNKNOWN_PATH), at("/404.html")]);
  const problems = missingHeaders(home, headersFor(rules, "/"), `${siteUrl} (/)`);
  if (unknown.status !== 404 || notFound.status !== 200 || unknown.body !== notFound.body) {
    const fallback = unknown.status === 200 && unknown.body === home.body;
    problems.push(
      new OwnerCommandError(
        `The site at ${siteUrl} answered ${unknown.status} for ${UNKNOWN_PATH}, a page it does not have, ` +
          (fallback
            ? "with the home page: the host serves index.html for every path (a single-page fallback)"
            : "not with the site's 404 page and status 404") +
          ". A mistyped link then looks like a page that exists, and search engines index every wrong address. " +
          "Upload 404.html with the rest of the build (it is in dist/), or set the host's not-found page to it with status 404.",
        "Unknown paths not answered 404",
      ),
    );
  }
  const asset = /["'(](\/_astro\/[^"'()\s?#]+)/.exec(home.body)?.[1];
  if (asset)
    problems.push(...missingHeaders(await at(asset), headersFor(rules, asset), `${siteUrl} (${asset})`));
  return problems;
}

/** One failure for each header of `wanted` that `page` does not send with the same value. */
function missingHeaders(page: Page, wanted: Record<string, string>, where: string): OwnerCommandError[] {
  return Object.entries(wanted)
    .filter(([name, value]) => String(page.headers[name] ?? "").trim() !== value.trim())
    .map(([name, value]) => {
      const sent = page.headers[name];
      return new OwnerCommandError(
        `The site at ${where} ${sent === undefined ? "does not send" : `sends another value of`} ${name} ` +
          `(public/_headers: "${value}"${sent === undefined ? "" : `; sent: "${sent}"`}): ${WHY[name] ?? "browsers lose what it asks of them"}. ` +
          "The host did not apply _headers: upload dist/ whole (_headers included), or set the header in the host's settings (deploy/README.md).",
        "Header missing",
      );
    });
}

/** Why each header of public/_headers matters, for the message that it is missing. */
const WHY: Record<string, string> = {
  "content-security-policy": "another site could frame the page and trick visitors into clicking through it",
  "x-frame-options": "older browsers would let another site frame the page",
  "x-content-type-options": "browsers may run a file as a type it is not",
  "referrer-policy": "the page's full address would reach every site it links to",
  "permissions-policy": "the page would be allowed features it never uses, should a script be injected",
  "cross-origin-opener-policy": "a window the page opens could reach back into it",
  "cache-control":
    "visitors would download the site's scripts and styles again on every visit, or keep stale ones",
};

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

/** How the site answered one request, after redirects. */
interface Page {
  status: number;
  headers: IncomingMessage["headers"];
  body: string;
}

/** The page, following up to 5 redirects (http → https, a trailing slash). */
async function fetchPage(url: URL, ca: string | undefined, redirects = 5): Promise<Page> {
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
  return { status: response.statusCode!, headers: response.headers, body };
}

function unreachable(url: URL, error: Error): OwnerCommandError {
  const code = (error as NodeJS.ErrnoException).code;
  return new OwnerCommandError(
    `Cannot reach the site at ${url.origin} (${code ?? error.message}): visitors cannot either. Check the host, ` +
      "the domain's DNS, and that SITE_URL is the site's address.",
    "Site unreachable",
  );
}
