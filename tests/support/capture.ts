// An output stream that keeps what is written to it: a verb's stdout or stderr, in a test.
import { PassThrough } from "node:stream";

export function capture() {
  const stream = new PassThrough();
  let written = "";
  stream.on("data", (chunk: Buffer) => (written += chunk.toString("utf8")));
  return Object.assign(stream, { text: () => written });
}
