// The server's own output (its stderr: every failed statement, with its text) kept in the
// cluster's folder, capped: `server.log` holds the latest, and when it would pass the cap it
// becomes `server.log.1` (replacing the one before) and a new one starts. The two together never
// pass twice the cap, however many requests fail, and the latest lines are always there to read.
//
// Not PostgreSQL's logging collector: its size-based rotation reopens the same file name in
// append mode (it truncates only on time-based rotation, to another name), so no set of fixed
// names caps it.
import { closeSync, fstatSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";

export const SERVER_LOG = "server.log";
export const PREVIOUS_SERVER_LOG = "server.log.1";

/** The most each of the two files holds. */
export const SERVER_LOG_FILE_CAP = 1024 * 1024;

/**
 * Appends what `streams` carry to the folder's log until they all end, rotating as it goes.
 * Resolves once everything they carried is written.
 */
export async function keepServerLog(
  folder: string,
  streams: Readable[],
  fileCap = SERVER_LOG_FILE_CAP,
): Promise<void> {
  const path = join(folder, SERVER_LOG);
  let file = openSync(path, "a");
  let size = fstatSync(file).size;
  // Synchronous writes: lines from both streams stay whole and in order, and a reader after the
  // streams end finds all of them.
  const write = (chunk: Buffer) => {
    try {
      if (size > 0 && size + chunk.length > fileCap) {
        closeSync(file);
        renameSync(path, join(folder, PREVIOUS_SERVER_LOG));
        file = openSync(path, "w");
        size = 0;
      }
      writeSync(file, chunk);
      size += chunk.length;
    } catch {
      // A full disk: the server's messages are what goes, never the process that keeps them.
    }
  };
  const ended = streams.map(
    (stream) =>
      new Promise<void>((resolve) => {
        stream.on("data", write);
        stream.once("close", resolve);
      }),
  );
  await Promise.all(ended);
  try {
    closeSync(file);
  } catch {
    // Closed already, by a rotation that failed halfway.
  }
}

/** The log's last `count` lines. */
export function lastServerLogLines(folder: string, count: number): string {
  return readFileSync(join(folder, SERVER_LOG), "utf8").split("\n").slice(-count).join("\n");
}
