// A sign-up made before the form's island has hydrated. The server-rendered form is visible, and
// can be filled in and submitted, long before React has hydrated it (on a slow phone, a second or
// more); a native submit would send the fields to the page's own URL (into the history, access
// logs and referrers) and lose them. The island's own module arrives well before React DOM does,
// and can already send. So this module, in three steps:
//
//   1. from the page's start (client:form calls holdSubmits): every submit is held;
//   2. once the island's module has arrived (client:form calls that module's `beforeHydration`,
//      which calls sendBeforeHydration): a held submit is sent at once, and any later one. React
//      loads only once nothing a sign-up needs is on its way and such a sign-up is answered
//      (hydrateWhenAnswered; client:painted islands wait alike, whenSignUpServed), so that
//      neither its download nor its start-up competes with the request. Meanwhile the form shows
//      the island's loading state (its fields and button disabled, the button's label from the
//      page's <template> SENDING_TEMPLATE). A success that comes back before React has started to
//      hydrate the island is shown at once: the success panel, rendered into the page by the
//      build (a <template>, SUCCESS_TEMPLATE), replaces the form, as the island itself would
//      replace it; any other answer puts the form back as it was served, for the island to say;
//   3. once React has hydrated the island (it calls takeOver): the island handles every submit
//      from then on, starting with what came before: it shows the answer to a sign-up already
//      sent, or handles a submit still held as its own. A success already shown is where the
//      island starts (shownBeforeHydration), so that React finds the page as it would render it.
//
// One sign-up at most before hydration: further submits are the same visitor insisting.
//
// Steps 1 and 2 run in two copies of this module (client:form's, inlined into the page, and the
// island's), so the state is written on the island element, as `data-sign-up`:
//
//   (none)      no submit yet
//   "held"      a submit came and is held, nothing sent: the island's module is still on its way,
//               or the address is not one (the island says so once it has hydrated)
//   "sent"      the island's module has sent it; the answer is on its way
//   "answered"  the answer is in, and waits for the island
//   "shown"     the answer was a success, and the success panel shows
//   "island"    the island has hydrated, and handles every submit itself
//
// While a submit is held, sent or answered, the island is `aria-busy`: assistive technology
// waits, and the page's CSS shows the button as busy.
//
// The visitor's first sign of intent, their first move toward the form (onIntent), is noted on
// the island too, as `data-intent`, for code that arrives after it: client:form starts loading
// on it, and the island's module makes the Supabase client (supabase-js) on it.
import { successAnnouncement } from "./form-states";
import type { Outcome } from "./sign-up-request";

type State = "held" | "sent" | "answered" | "shown" | "island";

const STATE = "data-sign-up";
const INTENT = "data-intent";
/** On the form's island while modules a sign-up needs are on their way: how many (fetchingForSignUp). */
const FETCHING = "data-fetching";
/** Set by client:form just before React starts to hydrate: from then on, only React changes the island. */
const HYDRATING = "data-hydrating";

/** The id of the <template> that holds the success panel, as the island renders it. */
export const SUCCESS_TEMPLATE = "sign-up-success";
/** The id of the <template> that holds the button's loading label, as the island renders it. */
export const SENDING_TEMPLATE = "sign-up-sending";
/** On the button while it shows the loading label: the label it was served with. */
const SERVED_LABEL = "data-served-label";

/**
 * The first signs that the visitor is turning to the form: also `input`, since a browser may
 * autofill the fields without focusing them.
 */
const INTENT_EVENTS = ["focusin", "pointerdown", "keydown", "input", "submit"];

const stateOf = (island: Element) => island.getAttribute(STATE) as State | null;

function enter(island: Element, state: State): void {
  island.setAttribute(STATE, state);
  if (state === "island" || state === "shown") island.removeAttribute("aria-busy");
  else island.setAttribute("aria-busy", "true");
}

/** Calls `callback` now, or once `waiting()` is false, checked as the page's sign-up changes. */
function whenNot(waiting: () => unknown, callback: () => void): void {
  if (!waiting()) return callback();
  const observer = new MutationObserver(() => {
    if (waiting()) return;
    observer.disconnect();
    callback();
  });
  observer.observe(document.body, { attributes: true, attributeFilter: [FETCHING, STATE], subtree: true });
}

/**
 * Called by client:form once the island's module has sent what was held, with what loads React
 * and the island: loads and hydrates once no module a sign-up needs is on its way and no sign-up
 * sent before hydration awaits its answer, so that the answer (a success shows at once) waits
 * neither for React's download nor for its hydrating the form.
 */
export function hydrateWhenAnswered(island: Element, load: () => Promise<() => unknown>): void {
  whenNot(
    () => island.hasAttribute(FETCHING) || stateOf(island) === "sent",
    () =>
      void load().then((hydrate) => {
        // Should a sign-up be sent while React loaded, React finds the form as served, and shows
        // the loading state itself.
        endLoading(island);
        island.setAttribute(HYDRATING, "");
        void hydrate();
      }),
  );
}

/**
 * Notes on the island that a module a sign-up needs is on its way, and returns what notes that it
 * has arrived or failed (once, however often it is called): client:form's, for the island's module
 * and for what it preloads at the visitor's first move.
 */
export function fetchingForSignUp(island: Element): () => void {
  const count = (change: number) => {
    const pending = Number(island.getAttribute(FETCHING) ?? 0) + change;
    if (pending > 0) island.setAttribute(FETCHING, String(pending));
    else island.removeAttribute(FETCHING);
  };
  count(1);
  let settled = false;
  return () => {
    if (!settled) count(-1);
    settled = true;
  };
}

/**
 * Calls `callback` once no sign-up waits for the page: none of its modules on its way
 * (fetchingForSignUp), and none held or sent. For what can wait until then (client:painted): on a
 * slow phone, the eager visitor's sign-up gets the line and the main thread to itself.
 */
export function whenSignUpServed(callback: () => void): void {
  whenNot(() => document.querySelector(`[${FETCHING}], [${STATE}=held], [${STATE}=sent]`), callback);
}

/** Calls `callback` once, at the visitor's first move toward the form, or now if it came already. */
export function onIntent(island: Element, callback: () => void): void {
  if (island.hasAttribute(INTENT)) return callback();
  const seen = () => {
    for (const type of INTENT_EVENTS) island.removeEventListener(type, seen);
    island.setAttribute(INTENT, "");
    callback();
  };
  for (const type of INTENT_EVENTS) island.addEventListener(type, seen, { passive: true });
}

/** Step 1, from the page's start: holds every submit until the island handles them itself. */
export function holdSubmits(island: Element): void {
  island.addEventListener("submit", (event) => {
    if (stateOf(island) === "island") return;
    event.preventDefault();
    if (!stateOf(island)) enter(island, "held");
  });
}

/** The answer to the sign-up sent before hydration, in the island module's copy. */
let answer: Promise<Outcome> | undefined;
/** Whether the island module's copy has shown the success panel. */
let shown = false;

/**
 * Replaces the form with the success panel from SUCCESS_TEMPLATE, as the island renders it on
 * success: the panel's heading takes over the form heading's id (it labels the island's section),
 * the status region says it, and the heading takes the focus. False when the page has no panel.
 */
function showSuccess(form: HTMLFormElement): boolean {
  const template = document.getElementById(SUCCESS_TEMPLATE);
  const panel =
    template instanceof HTMLTemplateElement && template.content.firstElementChild?.cloneNode(true);
  const heading = panel instanceof HTMLElement && panel.querySelector("h2");
  const status = form.parentElement?.querySelector("[role=status]");
  if (!heading || !status) return false;
  heading.id = form.querySelector("h2")?.id ?? "";
  form.replaceWith(panel);
  status.textContent = successAnnouncement(heading.textContent, panel.querySelector("p")?.textContent ?? "");
  heading.focus();
  return true;
}

/** Disables or enables every field and button in the island. */
function disableControls(island: Element, disabled: boolean): void {
  for (const control of island.querySelectorAll<HTMLInputElement>("input, button"))
    control.disabled = disabled;
}

/** The island's loading state: the fields and the button disabled, the button's label from SENDING_TEMPLATE. */
function showLoading(island: Element): void {
  const template = document.getElementById(SENDING_TEMPLATE);
  const button = island.querySelector("button");
  if (!(template instanceof HTMLTemplateElement) || !button) return;
  button.setAttribute(SERVED_LABEL, button.textContent);
  button.replaceChildren(template.content.cloneNode(true));
  disableControls(island, true);
}

/** The form as it was served, once more, after showLoading. */
function endLoading(island: Element): void {
  const button = island.querySelector(`[${SERVED_LABEL}]`);
  if (!button) return;
  button.textContent = button.getAttribute(SERVED_LABEL);
  button.removeAttribute(SERVED_LABEL);
  disableControls(island, false);
}

/**
 * Step 2, once the island's module has arrived: sends a held submit, now or when it comes.
 * `send` sends what the form holds, or returns null when its address is not one.
 */
export function sendBeforeHydration(
  island: Element,
  send: (form: HTMLFormElement) => Promise<Outcome> | null,
): void {
  const form = island.querySelector("form");
  if (!form) return;
  const sendHeld = () => {
    if (stateOf(island) !== "held") return;
    const sent = send(form);
    if (!sent) return;
    answer = sent;
    enter(island, "sent");
    // Once React hydrates, the page is React's to change.
    if (!island.hasAttribute(HYDRATING)) showLoading(island);
    void sent.then((outcome) => {
      if (stateOf(island) !== "sent") return;
      shown = outcome === "registered" && !island.hasAttribute(HYDRATING) && showSuccess(form);
      if (!shown) endLoading(island);
      enter(island, shown ? "shown" : "answered");
    });
  };
  sendHeld();
  // After holdSubmits' listener, which was added first and marks the submit held.
  island.addEventListener("submit", sendHeld);
}

/** Whether the success panel shows already, when React starts to hydrate: where the island starts. */
export const shownBeforeHydration = () => shown;

/**
 * Step 3, once React has hydrated the island that holds `element`: from now on the island handles
 * every submit. Returns what came before: the answer to the sign-up sent then, "held" for a
 * submit it must now handle as its own, "shown" for a success already shown, or undefined when
 * nothing was submitted.
 */
export function takeOver(element: Element): Promise<Outcome> | "held" | "shown" | undefined {
  // From the page: a submit the island's module never sent was held by client:form's copy.
  const island = element.closest("astro-island");
  if (!island) return undefined;
  const before = stateOf(island);
  enter(island, "island");
  if (before === "held" || before === "shown") return before;
  const taken = answer;
  answer = undefined;
  return taken;
}
