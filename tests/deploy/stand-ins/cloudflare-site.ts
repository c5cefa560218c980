// The live site of a stand-in Cloudflare account (cloudflare-api.ts): the files of the version it
// holds live, as uploaded, with that version's `_headers`, served by the static host (which reads
// `_headers` and answers unknown paths with `404.html` and 404, as Cloudflare's assets do; the
// hosts' tests show wrangler's own server doing the same). For the whole command's tests and its
// bench, whose checks ask the live address right after the upload. `dropHeader` makes it a host
// that loses one header of every answer, a fixture the checks must catch.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type OutgoingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createStaticHost } from "../../../tools/static-host/static-host.ts";
import type { CloudflareApi } from "./cloudflare-api.ts";

export interface LiveSite {
  url: string;
  /** A header to leave out of every answer from now on; undefined: none. */
  dropHeader(name: string | undefined): void;
  close(): Promise<void>;
}

export async function serveLiveVersion(api: CloudflareApi): Promise<LiveSite> {
  const folder = mkdtempSync(join(tmpdir(), "cloudflare-live-"));
  const host = createStaticHost({ root: folder });
  let shown = "";
  let dropped: string | undefined;
  const server = createServer((req, res) => {
    const version = api.live();
    if (version && version.id !== shown) {
      rmSync(folder, { recursive: true, force: true });
      for (const [path, hash] of Object.entries(version.manifest)) {
        mkdirSync(dirname(join(folder, path)), { recursive: true });
        writeFileSync(join(folder, path), api.content(hash));
      }
      writeFileSync(join(folder, "_headers"), version.config._headers ?? "");
      shown = version.id;
    }
    if (dropped) {
      const writeHead = res.writeHead.bind(res);
      res.writeHead = ((status: number, headers?: OutgoingHttpHeaders) => {
        const kept = Object.entries(headers ?? {}).filter(([name]) => name.toLowerCase() !== dropped);
        return writeHead(status, Object.fromEntries(kept) as OutgoingHttpHeaders);
      }) as typeof res.writeHead;
    }
    void host(req, res);
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    dropHeader: (name) => (dropped = name?.toLowerCase()),
    close: async () => {
      await new Promise((closed) => server.close(closed));
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
