// A sign-up made before the form's island has hydrated. The server-rendered form is visible, and
// can be filled in and submitted, long before React has hydrated it (on a slow phone, a second or
// more); a native submit would send the fields to the page's own URL (into the history, access
// logs and referrers) and lose them. The island's own module arrives well before React DOM does,
// and can already send. So this module, in three steps:
//
//   1. from the page's start (client:form calls holdSubmits): every submit is held;
//   2. once the island's module has arrived (client:form calls that module's `beforeHydration`,
//      which calls sendBeforeHydration): a held submit is sent at once, and any later one, so
//      that the answer travels while React downloads and hydrates;
//   3. once React has hydrated the island (it calls takeOver): the island handles every submit
//      from then on, starting with what came before: it shows the answer to a sign-up already
//      sent, or handles a submit still held as its own.
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
//   "island"    the island has hydrated, and handles every submit itself
//
// While a submit is held, sent or answered, the island is `aria-busy`: assistive technology
// waits, and the page's CSS shows the button as busy.
//
// The visitor's first sign of intent, their first move toward the form (onIntent), is noted on
// the island too, as `data-intent`, for code that arrives after it: client:form starts loading
// on it, and the island's module fetches supabase-js.
import type { Outcome } from "./sign-up-request";

type State = "held" | "sent" | "answered" | "island";

const STATE = "data-sign-up";
const INTENT = "data-intent";

/**
 * The first signs that the visitor is turning to the form: also `input`, since a browser may
 * autofill the fields without focusing them.
 */
const INTENT_EVENTS = ["focusin", "pointerdown", "keydown", "input", "submit"];

const stateOf = (island: Element) => island.getAttribute(STATE) as State | null;

function enter(island: Element, state: State): void {
  island.setAttribute(STATE, state);
  if (state === "island") island.removeAttribute("aria-busy");
  else island.setAttribute("aria-busy", "true");
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
    void sent.then(() => stateOf(island) === "sent" && enter(island, "answered"));
  };
  sendHeld();
  // After holdSubmits' listener, which was added first and marks the submit held.
  island.addEventListener("submit", sendHeld);
}

/**
 * Step 3, once React has hydrated the island that holds `form`: from now on the island handles
 * every submit. Returns what came before: the answer to the sign-up sent then, "held" for a
 * submit it must now handle as its own, or undefined when nothing was submitted.
 */
export function takeOver(form: HTMLFormElement): Promise<Outcome> | "held" | undefined {
  // From the page: a submit the island's module never sent was held by client:form's copy.
  const island = form.closest("astro-island");
  if (!island) return undefined;
  const before = stateOf(island);
  enter(island, "island");
  if (before === "held") return "held";
  const taken = answer;
  answer = undefined;
  return taken;
}
