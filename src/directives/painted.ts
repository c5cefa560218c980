// `client:painted`: hydrates when the browser is idle, as client:idle does, but never before the
// page's first paint, so that the island's JavaScript cannot delay it, nor before a sign-up has
// what it needs and its answer (whenSignUpServed), so that React's download and start-up cannot
// delay that either. Astro inlines this script into the page and hashes it into the
// Content-Security-Policy.
import type { ClientDirective } from "astro";
import { whenSignUpServed } from "../lib/sign-up-before-hydration";
import { idleAfterFirstPaint } from "./first-paint";

declare module "astro" {
  interface AstroClientDirectives {
    "client:painted"?: boolean;
  }
}

const paintedDirective: ClientDirective = (load) => {
  idleAfterFirstPaint(() => whenSignUpServed(async () => (await load())()));
};

export default paintedDirective;
