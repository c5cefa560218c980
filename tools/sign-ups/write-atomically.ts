// Writing a file of the list so that no one ever reads half of it, nor anyone but its owner.
import { createWriteStream, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Writable } from "node:stream";

/**
 * Writes a file under a temporary name beside it, readable by its owner only (it holds personal
 * data), and gives it its name only once complete: a failure leaves any earlier file as it was.
 */
export async function writeAtomically(path: string, write: (file: Writable) => Promise<void>): Promise<void> {
  const partial = join(dirname(path), `.${basename(path)}.${process.pid}.partial`);
  try {
    await write(createWriteStream(partial, { mode: 0o600 }));
    renameSync(partial, path);
  } finally {
    rmSync(partial, { force: true });
  }
}
