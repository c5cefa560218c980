// What the owner's tools throw for a failure to tell the owner, and the settings too, which the
// build and every tool read (environment.ts): tools/github/annotations.ts tells it where the owner
// looks, its title on GitHub's run page.

/** A failure to tell the owner: what happened and what to do, and a title naming its cause in a few words. */
export class OwnerFailure extends Error {
  readonly title: string;
  constructor(message: string, title: string) {
    super(message);
    this.title = title;
  }
}
