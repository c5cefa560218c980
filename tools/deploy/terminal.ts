// The deploy's questions on a terminal: a setting (a secret without echo) and a yes or no.
import { createInterface } from "node:readline";
import { Writable } from "node:stream";
import { OwnerFailure } from "../../config/owner-failure.ts";
import type { Asker } from "./settings.ts";

/** Asks on this process's terminal; what is typed for a secret is not shown. */
export const terminal: Asker & { confirm(question: string): Promise<boolean> } = {
  ask(question, secret) {
    // readline echoes every key to its output: for a secret, once the question is out, nothing more.
    let muted = false;
    const output = new Writable({
      write(chunk, encoding, done) {
        if (!muted) process.stderr.write(chunk, encoding);
        done();
      },
    });
    const lines = createInterface({ input: process.stdin, output, terminal: true });
    const answer = new Promise<string>((resolve, reject) => {
      let answered = false;
      lines.question(question, (typed) => {
        answered = true;
        if (secret) process.stderr.write("\n");
        lines.close();
        resolve(typed);
      });
      // The terminal closed (Ctrl-D) before an answer: nothing more can be asked.
      lines.once("close", () => {
        if (!answered)
          reject(new OwnerFailure("No answer: the terminal closed. Nothing was changed.", "Deploy stopped"));
      });
    });
    muted = secret;
    return answer;
  },
  async confirm(question) {
    return /^y(es)?$/i.test((await this.ask(`${question} [y/N] `, false)).trim());
  },
};
