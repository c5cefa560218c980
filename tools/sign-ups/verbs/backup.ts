// `backup`: the plain export encrypted, as it is written, to an age public key.
import { PassThrough, Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { OwnerCommandError } from "../failures.ts";
import { writeAtomically } from "../write-atomically.ts";
import type { VerbContext } from "./context.ts";
import { exportList } from "./export.ts";

/** An age public key, as age-keygen prints it: `age1` and 58 characters of bech32. */
const AGE_RECIPIENT = /^age1[02-9ac-hj-np-z]{58}$/;

/**
 * `backup`: the plain export (everyone, with their marks), encrypted as it is written to the age
 * public key `recipient`: only the holder of its private key can read the file. The list never
 * touches the disk in the clear: the CSV streams from the export into the encryption, in memory.
 */
export async function backup(
  context: VerbContext,
  { output, recipient, recipientSource }: { output: string; recipient: string; recipientSource: string },
): Promise<void> {
  if (!AGE_RECIPIENT.test(recipient))
    throw new OwnerCommandError(
      `${recipientSource} is not an age public key (age1… as age-keygen prints it): see tools/sign-ups/README.md, "An encrypted backup".`,
      "Backup key not valid",
    );
  const { Encrypter } = await import("age-encryption");
  const encrypter = new Encrypter();
  encrypter.addRecipient(recipient);
  const clear = new PassThrough();
  let failure: unknown = null;
  let count = 0;
  const exporting = exportList({ ...context, stdout: clear, stderr: new PassThrough().resume() }, {}).then(
    (exported) => {
      count = exported;
      clear.end();
    },
    (error: unknown) => {
      failure = error;
      clear.destroy(error as Error);
    },
  );
  const encrypted = await encrypter.encrypt(Readable.toWeb(clear) as ReadableStream<Uint8Array>);
  try {
    await writeAtomically(output, (file) => pipeline(Readable.fromWeb(encrypted as never), file));
  } catch (error) {
    throw failure ?? error;
  }
  await exporting;
  if (failure) throw failure;
  context.stderr.write(
    `Backed up ${count} ${count === 1 ? "sign-up" : "sign-ups"} to ${output}, encrypted to ${recipient.slice(0, 12)}…: ` +
      "only the holder of its private key can read it (age -d -i key.txt).\n",
  );
}
