// `remove`: one address however it was typed, one source's marked sign-ups, or one reason's.
import { isValidEmail, normalizeEmail } from "../../../src/lib/sign-up-rules.ts";
import { OwnerCommandError } from "../failures.ts";
import { REASONS, unhandled, type Reason } from "../marks.ts";
import type { SignUps } from "../rows.ts";
import type { VerbContext } from "./context.ts";
import { readMarks } from "./export.ts";

/** `remove <email>`: one address, however it was typed, normalised as the database stores it. */
export async function removeAddress({ signUps, stderr }: VerbContext, typed: string): Promise<void> {
  const address = normalizeEmail(typed);
  if (!isValidEmail(address))
    throw new OwnerCommandError(`"${typed}" is not an email address.`, "Wrong arguments");
  const removed = await signUps.remove(address);
  stderr.write(removed ? `Removed ${address}.\n` : `${address} is not on the list: nothing was removed.\n`);
}

/** `remove --source <id>`: one source's marked sign-ups. */
export async function removeSource({ signUps, stderr }: VerbContext, source: string): Promise<void> {
  const removed = await signUps.removeSource(source);
  stderr.write(
    removed > 0
      ? `Removed ${removed} marked ${removed === 1 ? "sign-up" : "sign-ups"} of source ${source}.\n`
      : `No marked sign-ups of source ${source}: nothing was removed.\n`,
  );
}

/** `remove --reason <reason>`: the sign-ups marked for it, as the marks read now. */
export async function removeReason({ signUps, stderr }: VerbContext, reason: Reason): Promise<void> {
  const removed = await removeForReason(signUps, reason);
  const words = REASONS[reason];
  stderr.write(
    removed > 0
      ? `Removed ${removed} ${removed === 1 ? "sign-up" : "sign-ups"} ${words}.\n`
      : `No sign-ups ${words}: nothing was removed.\n`,
  );
}

/** Removes the sign-ups marked for `reason`; how many. A new reason (marks.ts) fails to compile here until handled. */
async function removeForReason(signUps: SignUps, reason: Reason): Promise<number> {
  switch (reason) {
    case "pace":
      return signUps.removePastPace();
    case "same-mailbox": {
      const { repeats } = await readMarks(signUps);
      return signUps.removeIds([...repeats.keys()]);
    }
    case "disposable":
    case "typo": {
      const { marks } = await readMarks(signUps);
      const domains = [...marks].filter(([, mark]) => mark.reason === reason).map(([domain]) => domain);
      return signUps.removeAtDomains(domains);
    }
    default:
      return unhandled(reason);
  }
}
