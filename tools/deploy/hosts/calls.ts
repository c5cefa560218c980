// How a host is called, and what its failures tell the owner: its pinned CLI (tools/npx.ts) for the
// upload, its API for the one read the CLI does not offer (the address it gives the site), and
// what each prints, with every token blanked out, since a CLI's error may quote its request.
import { OwnerFailure } from "../../../config/owner-failure.ts";
import { blanked } from "../../github/mask.ts";
import type { PinnedRun } from "../../npx.ts";
import { lastLines } from "../../processes.ts";

/** A host refused or failed the upload, or did not answer: the title names the host. */
export class HostFailure extends OwnerFailure {
  constructor(host: string, message: string) {
    super(message, `${host} upload`);
  }
}

/** The last lines of a CLI's output, blanked of `secrets`: what the owner reads under our message. */
function tail(run: PinnedRun, secrets: string[], lines = 12): string {
  return blanked(lastLines(`${run.stdout}\n${run.stderr}`, lines).join("\n"), secrets);
}

/** The failure for a token the host refused (401 or 403): `token` names its setting and where to make one. */
export function tokenRefused(host: string, token: { name: string; where: string }): HostFailure {
  return new HostFailure(
    host,
    `${host} refused ${token.name}: it is mistyped, revoked, expired, or lacks a permission the upload needs. ` +
      "Nothing was uploaded, and the site as it is stays live. " +
      `Make a new token (${token.where}), set ${token.name} to it, and run the deploy again.`,
  );
}

/** How a host's CLI and its versions are named in the owner's messages, and how it says a token is refused. */
export interface HostCli {
  host: string;
  /** The CLI as the owner knows it: `wrangler`. */
  cli: string;
  /** The version live before this upload, in the host's words: "the deploy published before". */
  live: string;
  token: { name: string; where: string };
  /** What the CLI prints when the host refuses the token. */
  refused: RegExp;
}

/** What a network that does not carry the CLI's calls makes Node print. */
const NO_ANSWER = /fetch failed|FetchError|ECONNREFUSED|ENOTFOUND|ETIMEDOUT|EAI_AGAIN/;

/** What a CLI's failed upload means for the owner, with its last lines, never the token. */
export function cliFailure(run: PinnedRun, token: string, cli: HostCli): HostFailure {
  const printed = `${run.stdout}\n${run.stderr}`;
  const said = `${cli.cli} said:\n${tail(run, [token])}`;
  if (cli.refused.test(printed)) return tokenRefused(cli.host, cli.token);
  if (NO_ANSWER.test(printed))
    return new HostFailure(
      cli.host,
      `${cli.host}'s API stopped answering during the upload; ${cli.live} stays live. ` +
        `Check this machine's network, then run the deploy again. ${said}`,
    );
  return new HostFailure(
    cli.host,
    `The upload to ${cli.host} failed before the new version was complete; ${cli.live} stays live ` +
      `(${cli.host} makes a version live only once every file is in). Run the deploy again: it uploads only ` +
      `the files ${cli.host} still lacks. ${said}`,
  );
}

/** What a host's API answered: its status and JSON body (null when it sent none). */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

/**
 * A GET of `url` with `token` as the bearer; a host that does not answer becomes a HostFailure
 * naming `host` and the address asked, which the owner can try from a browser.
 */
export async function askApi(host: string, url: string, token: string): Promise<ApiAnswer> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new HostFailure(
      host,
      `${host}'s API did not answer (${new URL(url).origin}: ${(error as Error).cause ?? (error as Error).message}). ` +
        "Nothing was uploaded, and the site as it is stays live. Check this machine's network, then run the deploy again.",
    );
  }
  const body = await response.json().catch(() => null);
  return { status: response.status, body };
}
