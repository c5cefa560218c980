// What every verb is given: the sign-ups it reads from (client.ts, or a test's stand-in), its clock
// and zone, and where it writes (stdout for data, stderr for messages). cli.ts hands each verb the
// real ones; the tests hand it their own. A verb's failure is thrown (an OwnerCommandError: one
// line for the owner, failures.ts).
import type { Writable } from "node:stream";
import type { SignUps } from "../rows.ts";

/** Where a verb writes: a terminal (its width and colours), a pipe, a file, or a test's buffer. */
export type Output = Writable & { isTTY?: boolean; columns?: number; hasColors?: () => boolean };

export interface VerbContext {
  signUps: SignUps;
  /** The instant days and hours are counted from. */
  now: Date;
  /** The owner's time zone (`Europe/Paris`): the days' and the tables' (formatLocal's is the process's). */
  zone: string;
  /** Data. */
  stdout: Output;
  /** Messages. */
  stderr: Output;
}
