// What `npm run deploy` asks of a host (`--host cloudflare|netlify|vercel`): its settings, the
// address it gives the site (the build's SITE_URL when the owner names none), and the upload of
// `dist/` with the host's own CLI at a pinned version (tools/npx.ts), which keeps the page's
// headers (public/_headers), answers unknown paths with `404.html` and status 404, and serves
// `/_astro/*` as immutable. Each host is one file beside this one.
import type { Setting } from "../settings.ts";

export interface Upload {
  /** The address the new version answers at (the site's own address once it is live). */
  url: string;
  /** The host's id of the version live before this upload, where its rollback names one (Netlify's deploy). */
  previous?: string;
}

export interface Host {
  /** As `--host` names it. */
  name: string;
  /** The CLI, `package@version`, as npx runs it. */
  cli: string;
  /** What it needs, by the names the host's own CLI reads. */
  settings: Setting[];
  /** The address the host gives the site, known before the first upload (`https://<project>.pages.dev`). */
  address(settings: Record<string, string>, env: NodeJS.ProcessEnv): Promise<string>;
  /**
   * Uploads `dist` (the build, `_headers` and `404.html` in it) and makes it the live version; on
   * failure the previous version stays live. `env` is the CLI's environment (its API's address in
   * the tests). Fails with an OwnerFailure naming what to do.
   */
  upload(dist: string, settings: Record<string, string>, env: NodeJS.ProcessEnv): Promise<Upload>;
  /** The host's own command that makes the version live before `upload` live again. */
  rollback(settings: Record<string, string>, upload?: Upload): string;
}
