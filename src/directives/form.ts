// `client:form`, for an island that is a form. The server-rendered form is visible, and can be
// filled in and submitted, long before its island has hydrated; a native submit would then send
// the fields to the page's own URL (into the history, access logs and referrers) and lose them.
// So, until the island announces that it handles submits itself, this holds every submit and
// submits it again once the island is ready. It hydrates as client:painted does (when idle after
// the first paint), or at once when the visitor turns to the form. Its value, when given, says
// what else the first sign of intent starts: a connection to the origin the form sends to
// (preconnect), so that the first request does not pay for DNS, TCP and TLS, and the download of
// the modules a sign-up needs (modulepreload), side by side with the island's own. Astro inlines
// this script into the page and hashes it into the Content-Security-Policy.
import type { ClientDirective } from "astro";
import { idleAfterFirstPaint } from "./first-paint";

declare module "astro" {
  interface AstroClientDirectives {
    "client:form"?: boolean | FormIntent;
  }
}

export interface FormIntent {
  /** Where the form sends its requests. */
  origin: string;
  /** Space-separated addresses of modules to preload (src/integrations/intent-modules.ts). */
  modules: string;
}

/** Dispatched (bubbling) from inside the island once its own submit handler is live. */
export const ISLAND_READY = "island-ready";

/**
 * The first signs that the visitor is turning to the form: also `input`, since a browser may
 * autofill the fields without focusing them.
 */
export const FORM_INTENT = ["focusin", "pointerdown", "keydown", "input", "submit"];

/** Set on the island at the first sign of intent, for code that arrives later. */
export const INTENT_SEEN = "data-intent";

const formDirective: ClientDirective = (load, { value }, island) => {
  let hydrating: Promise<void> | undefined;
  const hydrate = () => (hydrating ??= load().then((hydrate) => hydrate()));

  const onIntent = () => {
    for (const type of FORM_INTENT) island.removeEventListener(type, onIntent);
    island.setAttribute(INTENT_SEEN, "");
    // Astro types every directive value as a string; this one is what index.astro passes.
    const intent = value as unknown as FormIntent | undefined;
    // crossorigin: the form's requests are CORS requests, which never use a connection opened
    // without it.
    if (intent?.origin) {
      document.head.append(
        Object.assign(document.createElement("link"), {
          rel: "preconnect",
          href: intent.origin,
          crossOrigin: "",
        }),
      );
    }
    // Addresses only: under `npm run dev` the build has not written them in.
    for (const href of intent?.modules.split(" ").filter((module) => module.startsWith("/")) ?? []) {
      document.head.append(Object.assign(document.createElement("link"), { rel: "modulepreload", href }));
    }
    void hydrate();
  };

  let held: SubmitEvent | undefined;
  const hold = (event: Event) => {
    event.preventDefault();
    held = event as SubmitEvent;
    // Shows that the submit was taken (the page's CSS dims the button) and tells assistive
    // technology to wait; the island's own loading state takes over once it is ready.
    island.setAttribute("aria-busy", "true");
  };
  island.addEventListener("submit", hold);
  island.addEventListener(
    ISLAND_READY,
    () => {
      island.removeEventListener("submit", hold);
      island.removeAttribute("aria-busy");
      // After React's commit, which is still under way, and before any new event can arrive.
      if (held) {
        const { target, submitter } = held;
        queueMicrotask(() => (target as HTMLFormElement).requestSubmit(submitter));
      }
    },
    { once: true },
  );

  for (const type of FORM_INTENT) island.addEventListener(type, onIntent, { passive: true });
  idleAfterFirstPaint(hydrate);
};

export default formDirective;
