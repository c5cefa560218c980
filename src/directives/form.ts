// `client:form`, for an island that is a form. It hydrates as client:painted does (when idle after
// the first paint), or at once when the visitor turns to the form. Until the island has hydrated,
// the sign-up made meanwhile is src/lib/sign-up-before-hydration.ts's: this holds every submit
// from the page's start, and hands the island to its module's `beforeHydration` export as soon as
// that module has arrived, before React DOM has.
//
// Its value, when given, says what else the visitor's first sign of intent starts: a connection
// to the origin the form sends to (preconnect), so that the first request does not pay for DNS,
// TCP and TLS, and the download of the modules a sign-up needs (modulepreload), side by side with
// the island's own. Astro inlines this script into the page and hashes it into the
// Content-Security-Policy.
import type { ClientDirective } from "astro";
import {
  fetchingForSignUp,
  holdSubmits,
  hydrateWhenAnswered,
  onIntent,
} from "../lib/sign-up-before-hydration";
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

/** What an island's module may export to act before it hydrates. */
interface IslandModule {
  beforeHydration?: (island: HTMLElement) => void;
}

/**
 * The modules to preload: none under `npm run dev`, where the build has not written their
 * addresses in, and none in a browser without modulepreload (Safari before 17, Firefox before
 * 115), which neither fetches such a link nor ever says it is done, so that React would wait for
 * it forever. There, the modules load when they are imported.
 */
function modulesToPreload(intent: FormIntent | undefined): string[] {
  if (!document.createElement("link").relList.supports("modulepreload")) return [];
  return intent?.modules.split(" ").filter((module) => module.startsWith("/")) ?? [];
}

const formDirective: ClientDirective = (load, { value }, island) => {
  holdSubmits(island);
  // Until the island's module is here, client:painted islands wait (whenSignUpServed).
  const moduleHere = fetchingForSignUp(island);

  let hydrating = false;
  const hydrate = () => {
    if (hydrating) return;
    hydrating = true;
    // The island's module first (the same module Astro's load() imports, so it is fetched once):
    // it sends a submit held meanwhile. React follows once nothing a sign-up needs is on its way
    // and no sign-up awaits its answer, so that neither React's download nor its start-up
    // competes with the request or delays the answer. Should the module fail to download, load()
    // retries it, and a held submit waits for the island.
    const url = island.getAttribute("component-url");
    const sending = url
      ? import(url).then(
          (module: IslandModule) => module.beforeHydration?.(island),
          () => {},
        )
      : Promise.resolve();
    void sending.then(() => {
      moduleHere();
      hydrateWhenAnswered(island, load);
    });
  };

  onIntent(island, () => {
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
    for (const href of modulesToPreload(intent)) {
      const link = Object.assign(document.createElement("link"), { rel: "modulepreload", href });
      link.onload = link.onerror = fetchingForSignUp(island);
      document.head.append(link);
    }
    hydrate();
  });
  idleAfterFirstPaint(hydrate);
};

export default formDirective;
