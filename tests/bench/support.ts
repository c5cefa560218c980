// What the benches share: serving a build as `npm start` does, medians, and markdown tables.
import { readdir } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createStaticHost } from "../../server/static-host.ts";

export function median(values: number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function ms(n: number): string {
  return `${Math.round(n)} ms`;
}

/** A markdown table, padded so that it also reads well in a terminal. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join("\n");
}

/** Every file under a folder, as paths relative to it. */
export async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length));
}

/** Serves a build as `npm start` does, on a free loopback port. */
export async function serve(root: string): Promise<{ origin: string; close: () => Promise<void> }> {
  const host = createStaticHost({ root });
  const server = createServer((req, res) => void host(req, res));
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The host compresses each file on its first request; fetching everything once keeps that
  // one-off cost out of the first run's server response times.
  for (const file of await filesUnder(root)) {
    await (await fetch(origin + file, { headers: { "Accept-Encoding": "br" } })).arrayBuffer();
  }
  return {
    origin,
    close: () => new Promise((closed) => server.close(() => closed())),
  };
}
