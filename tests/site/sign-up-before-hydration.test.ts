// @vitest-environment jsdom
// The sign-up made before the form's island hydrates, step by step, in a simulated DOM: the
// states it writes on the island, what it sends, and what the island takes over. The browser
// tests (tests/site/browser/before-hydration.spec.ts) run the same with the real build and network.
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { Outcome } from "../../src/lib/sign-up-request";

type Module = typeof import("../../src/lib/sign-up-before-hydration");

let early: Module;
let island: HTMLElement;
let form: HTMLFormElement;

beforeEach(async () => {
  // A fresh module each time: the island's copy keeps the answer it sent.
  vi.resetModules();
  early = await import("../../src/lib/sign-up-before-hydration");
  document.body.innerHTML =
    '<astro-island><section><form><h2 id="heading">Heading</h2><input name="email" type="email" />' +
    '<button type="submit"></button></form><p role="status"></p></section></astro-island>';
  island = document.querySelector("astro-island")!;
  form = island.querySelector("form")!;
});

/** Submits the form as the browser would; true when nothing stopped the native submit. */
const submit = () => form.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));

const state = () => [island.getAttribute("data-sign-up"), island.getAttribute("aria-busy")];

/** A `send` that sends everything, answering `outcome` when `answer()` is called. */
function sender(outcome: Outcome = "registered") {
  const answered = Promise.withResolvers<Outcome>();
  const send = vi.fn(() => answered.promise);
  return { send, answer: () => answered.resolve(outcome), promise: answered.promise };
}

describe("before the island's module arrives", () => {
  it("holds a submit: not sent by the browser, marked held and busy", () => {
    early.holdSubmits(island);
    expect(state()).toEqual([null, null]);
    expect(submit(), "the browser's own submit went ahead").toBe(false);
    expect(state()).toEqual(["held", "true"]);
  });
});

describe("once the island's module has arrived", () => {
  it("sends a held submit at once, then notes the answer", async () => {
    early.holdSubmits(island);
    submit();
    const { send, answer, promise } = sender();
    early.sendBeforeHydration(island, send);
    expect(send).toHaveBeenCalledWith(form);
    expect(state()).toEqual(["sent", "true"]);
    answer();
    await promise;
    await Promise.resolve();
    expect(state()).toEqual(["answered", "true"]);
  });

  it("sends a submit that comes later, once, however often the visitor insists", () => {
    early.holdSubmits(island);
    const { send } = sender();
    early.sendBeforeHydration(island, send);
    expect(send).not.toHaveBeenCalled();
    expect(submit()).toBe(false);
    expect(submit()).toBe(false);
    expect(send).toHaveBeenCalledTimes(1);
    expect(state()).toEqual(["sent", "true"]);
  });

  it("keeps holding a submit whose address is not one, and sends the corrected one", () => {
    early.holdSubmits(island);
    const send = vi.fn<(form: HTMLFormElement) => Promise<Outcome> | null>(() => null);
    early.sendBeforeHydration(island, send);
    submit();
    expect(state()).toEqual(["held", "true"]);
    send.mockImplementation(() => Promise.resolve("registered"));
    submit();
    expect(send).toHaveBeenCalledTimes(2);
    expect(state()).toEqual(["sent", "true"]);
  });
});

describe("while a sign-up sent before hydration travels", () => {
  /** The button's loading label, as index.astro renders it into its template. */
  function addSendingTemplate() {
    document.body.insertAdjacentHTML(
      "beforeend",
      `<template id="${early.SENDING_TEMPLATE}"><span aria-hidden="true"></span>Sending</template>`,
    );
  }

  const button = () => form.querySelector("button")!;
  const disabled = () =>
    [...form.querySelectorAll("input, button")].map((control) => control.matches(":disabled"));

  it("shows the island's loading state, and puts the form back as served for any answer but a success", async () => {
    addSendingTemplate();
    button().textContent = "Notify";
    early.holdSubmits(island);
    submit();
    const { send, answer, promise } = sender("failed");
    early.sendBeforeHydration(island, send);
    expect(button().textContent).toBe("Sending");
    expect(button().querySelector("[aria-hidden]")).not.toBeNull();
    expect(disabled()).toEqual([true, true]);
    answer();
    await promise;
    await Promise.resolve();
    expect(state()).toEqual(["answered", "true"]);
    expect(button().innerHTML).toBe("Notify");
    expect(button().attributes).toHaveLength(1);
    expect(disabled()).toEqual([false, false]);
  });

  it("puts the form back as served when React hydrates before the answer", async () => {
    addSendingTemplate();
    button().textContent = "Notify";
    early.holdSubmits(island);
    // React is on its way before the sign-up leaves.
    const react = Promise.withResolvers<() => void>();
    early.hydrateWhenAnswered(island, () => react.promise);
    submit();
    early.sendBeforeHydration(island, sender().send);
    expect(button().textContent).toBe("Sending");
    const hydrate = vi.fn(() => {
      expect(button().innerHTML, "what React finds").toBe("Notify");
      expect(disabled()).toEqual([false, false]);
    });
    react.resolve(hydrate);
    await vi.waitFor(() => expect(hydrate).toHaveBeenCalledTimes(1));
  });
});

/** The page's success panel, as index.astro renders it into its template. */
function addSuccessTemplate() {
  document.body.insertAdjacentHTML(
    "beforeend",
    `<template id="${early.SUCCESS_TEMPLATE}"><div data-testid="success-panel"><h2 tabindex="-1">Welcome</h2><p>Message</p></div></template>`,
  );
}

/** Sends a submit before hydration, and lets its answer, `outcome`, come back. */
async function answered(outcome: Outcome) {
  early.holdSubmits(island);
  submit();
  const { send, answer, promise } = sender(outcome);
  early.sendBeforeHydration(island, send);
  answer();
  await promise;
  await Promise.resolve();
}

describe("a success answered before React hydrates", () => {
  it("replaces the form with the page's success panel, says so, and moves the focus there", async () => {
    addSuccessTemplate();
    await answered("registered");
    expect(state()).toEqual(["shown", null]);
    expect(island.querySelector("form")).toBeNull();
    const heading = island.querySelector("[data-testid=success-panel] h2");
    // The heading that labels the section is now the panel's.
    expect(heading?.id).toBe("heading");
    expect(document.activeElement).toBe(heading);
    expect(island.querySelector("[role=status]")?.textContent).toBe("Welcome. Message");
    expect(early.shownBeforeHydration()).toBe(true);
    expect(early.takeOver(heading!)).toBe("shown");
    expect(state()).toEqual(["island", null]);
  });

  it.each<Outcome>(["duplicate", "failed"])("leaves a %s answer to the island", async (outcome) => {
    addSuccessTemplate();
    await answered(outcome);
    expect(state()).toEqual(["answered", "true"]);
    expect(island.querySelector("form")).not.toBeNull();
    expect(early.shownBeforeHydration()).toBe(false);
  });

  it("has React wait to load while the answer travels, and shows the success first", async () => {
    addSuccessTemplate();
    early.holdSubmits(island);
    submit();
    const { send, answer, promise } = sender();
    early.sendBeforeHydration(island, send);
    const hydrate = vi.fn();
    const load = vi.fn(async () => hydrate);
    early.hydrateWhenAnswered(island, load);
    // React loads and hydrates after the answer, not while it travels.
    expect(load).not.toHaveBeenCalled();
    answer();
    await promise;
    await vi.waitFor(() => expect(hydrate).toHaveBeenCalledTimes(1));
    expect(load).toHaveBeenCalledTimes(1);
    expect(state()).toEqual(["shown", null]);
  });

  it("is left to the island when React started to hydrate before the sign-up was sent", async () => {
    addSuccessTemplate();
    const hydrate = vi.fn();
    early.hydrateWhenAnswered(island, async () => hydrate);
    await vi.waitFor(() => expect(hydrate).toHaveBeenCalledTimes(1));
    await answered("registered");
    expect(state()).toEqual(["answered", "true"]);
    expect(island.querySelector("form")).not.toBeNull();
  });

  it("is left to the island on a page without the panel", async () => {
    await answered("registered");
    expect(state()).toEqual(["answered", "true"]);
  });
});

describe("what waits for a sign-up", () => {
  it("React waits for the modules a sign-up needs, then loads", async () => {
    const arrived = early.fetchingForSignUp(island);
    const hydrate = vi.fn();
    const load = vi.fn(async () => hydrate);
    early.hydrateWhenAnswered(island, load);
    expect(load).not.toHaveBeenCalled();
    arrived();
    await vi.waitFor(() => expect(hydrate).toHaveBeenCalledTimes(1));
  });

  it("client:painted waits while a module is on its way, a submit is held or sent, and for nothing else", async () => {
    const after = vi.fn();
    const failed = early.fetchingForSignUp(island);
    const arrived = early.fetchingForSignUp(island);
    early.whenSignUpServed(after);
    // A download that failed, noted twice (a link's load and error both call it): settled once.
    failed();
    failed();
    await Promise.resolve();
    expect(after, "while a module is on its way").not.toHaveBeenCalled();
    early.holdSubmits(island);
    submit();
    arrived();
    await new Promise((settled) => setTimeout(settled));
    expect(after, "while the submit is held").not.toHaveBeenCalled();
    const { send, answer, promise } = sender();
    early.sendBeforeHydration(island, send);
    await new Promise((settled) => setTimeout(settled));
    expect(after, "while the sign-up is sent").not.toHaveBeenCalled();
    answer();
    await promise;
    await vi.waitFor(() => expect(after).toHaveBeenCalledTimes(1));
    const now = vi.fn();
    early.whenSignUpServed(now);
    expect(now).toHaveBeenCalledTimes(1);
  });
});

describe("once React has hydrated the island", () => {
  it("hands over the answer to the sign-up sent before, once", () => {
    early.holdSubmits(island);
    submit();
    const { send, promise } = sender();
    early.sendBeforeHydration(island, send);
    expect(early.takeOver(form)).toBe(promise);
    expect(state()).toEqual(["island", null]);
    expect(early.takeOver(form)).toBeUndefined();
  });

  it("hands over a submit still held, for the island to handle as its own", () => {
    early.holdSubmits(island);
    submit();
    expect(early.takeOver(form)).toBe("held");
    expect(state()).toEqual(["island", null]);
  });

  it("hands over nothing when nothing was submitted, and holds no submit from then on", () => {
    early.holdSubmits(island);
    const { send } = sender();
    early.sendBeforeHydration(island, send);
    expect(early.takeOver(form)).toBeUndefined();
    expect(submit(), "a submit after hydration is the island's to stop").toBe(true);
    expect(send).not.toHaveBeenCalled();
    expect(state()).toEqual(["island", null]);
  });
});

describe("onIntent", () => {
  it.each([
    // The move is seen by whoever listens at the time, once.
    ["focusin", "before", 1],
    ["pointerdown", "before", 1],
    ["keydown", "before", 1],
    // A browser may autofill without focusing a field.
    ["input", "before", 1],
    ["submit", "before", 1],
    // Code that arrives after the move is called at once.
    ["focusin", "after", 1],
    // Anything else is no move toward the form.
    ["click", "before", 0],
  ])("%s, listening %s it: called %i time(s)", (type, listening, calls) => {
    // client:form's copy listens from the page's start.
    early.onIntent(island, () => {});
    const later = vi.fn();
    if (listening === "before") early.onIntent(island, later);
    form.dispatchEvent(new Event(type, { bubbles: true, cancelable: true }));
    form.dispatchEvent(new Event(type, { bubbles: true, cancelable: true }));
    if (listening === "after") early.onIntent(island, later);
    expect(later).toHaveBeenCalledTimes(calls);
  });
});
