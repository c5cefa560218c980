// PGlite's Node filesystem, made to keep what PostgreSQL commits. PGlite maps its data folder
// into the WebAssembly machine with Emscripten's NODEFS, whose streams have no fsync and whose
// fdatasync does nothing: PostgreSQL's fsync calls, at every commit, never reached the disk, so
// an operating-system crash or a power cut could lose acknowledged sign-ups. Here each stream's
// fsync is a real fsync(2) of its file, and PostgreSQL is told to flush its log with fsync
// (durableStartParams), the call that now arrives.
import { fsyncSync } from "node:fs";
import type { PGlite } from "@electric-sql/pglite";
import { NodeFS } from "@electric-sql/pglite/nodefs";

type EmscriptenOptions = Parameters<NodeFS["init"]>[1];

/** A stream of Emscripten's NODEFS: `nfd` is the Node file descriptor behind it. */
interface NodeStream {
  nfd: number;
}

interface EmscriptenModule {
  NODEFS: { stream_ops: { fsync?: (stream: NodeStream) => number } };
}

export class DurableNodeFS extends NodeFS {
  override async init(pg: PGlite, options: EmscriptenOptions) {
    const { emscriptenOpts } = await super.init(pg, options);
    const realFsync = (module: EmscriptenModule) => {
      module.NODEFS.stream_ops.fsync = ({ nfd }) => {
        fsyncSync(nfd);
        return 0;
      };
    };
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), realFsync] } };
  }
}

/**
 * PGlite's start parameters without its -F (fsync off), the log flushed with fsync(): fdatasync()
 * is the call Emscripten drops.
 */
export function durableStartParams(params: readonly string[]): string[] {
  return [...params.filter((param) => param !== "-F"), "-c", "fsync=on", "-c", "wal_sync_method=fsync"];
}
