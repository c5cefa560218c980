// The form's island module arrives well before React has downloaded and hydrated the form (on a
// slow phone, by a second or more). From then on, this sends a submit that client:form holds
// (src/directives/form.ts) at once, and fetches supabase-js as soon as the visitor turns to the
// form, so that the answer is on its way while React hydrates. The island, once ready, adopts
// that sign-up (takeEarlySignUp) when client:form submits the held event again, instead of
// sending it a second time.
import { FORM_INTENT, INTENT_SEEN, ISLAND_READY } from "../directives/form";
import { readSignUp } from "./sign-up-fields";
import { register, type Outcome } from "./sign-up-request";
import { getSupabase } from "./supabase";

let early: Promise<Outcome> | undefined;

/** Starts listening on the form's island, which has not hydrated yet. */
export function beforeHydration(island: Element | null): void {
  const form = island?.querySelector("form");
  if (!island || !form) return;

  const warmUp = () => {
    for (const type of FORM_INTENT) island.removeEventListener(type, warmUp);
    getSupabase().catch(() => {}); // a failure resurfaces, and is handled, on submit
  };
  if (island.hasAttribute(INTENT_SEEN)) warmUp();
  else for (const type of FORM_INTENT) island.addEventListener(type, warmUp, { passive: true });

  // One sign-up at most: further submits before hydration are the same visitor insisting.
  // An address that is not one is left to the island, which says so.
  const send = () => {
    const signUp = early ? null : readSignUp(form);
    if (signUp) early = register(getSupabase, signUp);
  };
  // client:form marks the island busy while it holds a submit.
  if (island.getAttribute("aria-busy") === "true") send();
  island.addEventListener("submit", send);
  island.addEventListener(ISLAND_READY, () => island.removeEventListener("submit", send), { once: true });
}

/** The outcome of the sign-up sent before hydration, once: the island's first submit adopts it. */
export function takeEarlySignUp(): Promise<Outcome> | undefined {
  const taken = early;
  early = undefined;
  return taken;
}
