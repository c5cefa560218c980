// The deploy's questions on a terminal: a setting (a secret without echo) and a yes or no.
import { createInterface } from "node:readline";
import { Writable } from "node:stream";
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
    const answer = new Promise<string>((resolve) =>
      lines.question(question, (typed) => {
        if (secret) process.stderr.write("\n");
        lines.close();
        resolve(typed);
      }),
    );
    muted = secret;
    return answer;
  },
  async confirm(question) {
    return /^y(es)?$/i.test((await this.ask(`${question} [y/N] `, false)).trim());
  },
};
