// What a host CLI's failed upload tells the owner (tools/deploy/hosts/calls.ts): which failure,
// from what the CLI printed, with its last lines and never the token.
import { describe, expect, it } from "vitest";
import { cliFailure, type HostCli } from "../../tools/deploy/hosts/calls.ts";

const TOKEN = "tok_3e9f-secret";
const cli: HostCli = {
  host: "Example",
  cli: "example-cli",
  live: "the version live before",
  token: { name: "EXAMPLE_TOKEN", where: "example.com → Tokens" },
  refused: /Authentication error/,
};
const failure = (stdout: string, stderr = "") =>
  cliFailure({ status: 1, stdout, stderr }, TOKEN, cli).message;

describe("cliFailure", () => {
  it.each([
    // The host's refusal, in the CLI's words: the setting and where to make a new one.
    {
      printed: "✘ Authentication error [code: 10000]",
      says: /^Example refused EXAMPLE_TOKEN.*example\.com → Tokens/s,
    },
    // Node's own words for a network that does not carry the call.
    {
      printed: "TypeError: fetch failed\n  cause: connect ECONNREFUSED 127.0.0.1:443",
      says: /^Example's API stopped answering.*the version live before stays live/s,
    },
    { printed: "getaddrinfo ENOTFOUND api.example.com", says: /^Example's API stopped answering/ },
    // Anything else: a failure half-way, the live version kept, and a second run's promise.
    {
      printed: "✘ Upload failed: 500 Internal Server Error",
      says: /^The upload to Example failed.*the version live before stays live.*uploads only the files Example still lacks/s,
    },
  ])("$printed", ({ printed, says }) => {
    expect(failure(printed)).toMatch(says);
  });

  it("quotes the CLI's last lines without the token, its colours or its stack frames", () => {
    const message = failure(
      `\u001b[31m✘ Upload failed for Bearer ${TOKEN}\u001b[0m\n    at upload (cli.js:1:1)\n`,
      `request headers: authorization=${TOKEN}`,
    );
    expect(message).toContain(
      "example-cli said:\n✘ Upload failed for Bearer ***\nrequest headers: authorization=***",
    );
    expect(message).not.toContain(TOKEN);
    expect(message).not.toContain("\u001b");
    expect(message).not.toContain("at upload");
  });
});
