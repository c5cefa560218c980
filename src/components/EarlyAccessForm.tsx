import {
  lazy,
  Suspense,
  useCallback,
  useEffect,
  useId,
  useLayoutEffect,
  useReducer,
  useRef,
  useState,
  type SubmitEvent,
} from "react";
import { formReducer, initialFormState, successAnnouncement, type FormError } from "../lib/form-states";
import {
  onIntent,
  sendBeforeHydration,
  shownBeforeHydration,
  takeOver,
} from "../lib/sign-up-before-hydration";
import { readSignUp } from "../lib/sign-up-fields";
import { register, type Outcome } from "../lib/sign-up-request";
import { getSupabase } from "../lib/supabase";
import Field from "./Field";
import SendingLabel from "./SendingLabel";
import SuccessPanel from "./SuccessPanel";

/** Sends the sign-up the form holds, or returns null when its address is not one. */
function send(form: HTMLFormElement): Promise<Outcome> | null {
  const signUp = readSignUp(form);
  return signUp && register(getSupabase, signUp);
}

/**
 * Called by client:form as soon as this module has arrived, long before React has hydrated the
 * island: from here on, a held submit is sent at once (src/lib/sign-up-before-hydration.ts).
 * The Supabase client's module is already on its way by then if the visitor has turned to the
 * form: client:form preloads it at their first sign of intent. From then on, the client is made
 * as soon as it is here, while the visitor types, so that supabase-js has started before the
 * first sign-up needs it.
 */
export function beforeHydration(island: HTMLElement): void {
  sendBeforeHydration(island, send);
  onIntent(island, () => void getSupabase());
}

interface Toast {
  title: string;
  description: string;
}

/** Every string the form shows, from the content file (src/content/site.yaml) through the page. */
export interface EarlyAccessCopy {
  heading: string;
  emailLabel: string;
  emailPlaceholder: string;
  phoneLabel: string;
  phonePlaceholder: string;
  phoneHint: string;
  submit: string;
  submitting: string;
  note: string;
  /** Shown only when JavaScript is off, without which nothing can be sent. */
  needsJavaScript: string;
  errors: Record<FormError, string>;
  toasts: Record<Outcome, Toast>;
  success: { title: string; message: string };
}

const Toasts = lazy(() => import("./Toasts"));

/** Resolves once, when the lazily loaded Toaster is ready to show toasts. */
function useToasterReady() {
  // Not Promise.withResolvers: Safari has it only since 17.4.
  const [ready] = useState(() => {
    let resolve = () => {};
    const promise = new Promise<void>((settle) => (resolve = settle));
    return { promise, resolve };
  });
  const onMounted = useCallback(() => ready.resolve(), [ready]);
  return { whenReady: ready.promise, onMounted };
}

export default function EarlyAccessForm({ copy }: { copy: EarlyAccessCopy }) {
  // A success shown before hydration is where the island starts: React then finds the page as
  // it renders it.
  const [shownBefore] = useState(shownBeforeHydration);
  const [state, dispatch] = useReducer(
    formReducer,
    shownBefore ? { status: "success", error: null } : initialFormState,
  );
  const [announcement, setAnnouncement] = useState(() =>
    shownBefore ? successAnnouncement(copy.success.title, copy.success.message) : "",
  );
  const [toasterWanted, setToasterWanted] = useState(false);
  const toaster = useToasterReady();
  const submitting = useRef(false);
  const form = useRef<HTMLFormElement>(null);
  const emailInput = useRef<HTMLInputElement>(null);
  const successHeading = useRef<HTMLHeadingElement>(null);
  const section = useRef<HTMLElement>(null);
  const ids = { heading: useId(), email: useId(), phone: useId(), phoneHint: useId(), message: useId() };

  // After an answer, focus goes where the person acts next: the email field to correct it,
  // or the panel that replaced the form (which took it already, if shown before hydration).
  const focusedAlready = useRef(shownBefore);
  useEffect(() => {
    if (focusedAlready.current) return void (focusedAlready.current = false);
    if (state.status === "error") emailInput.current?.focus();
    if (state.status === "success") successHeading.current?.focus();
  }, [state]);

  // sonner stays off the page until someone shows interest in the form (supabase-js too:
  // client:form preloads it then).
  const loadToaster = () => setToasterWanted(true);

  // From this commit on, React handles submits, starting with one made before it hydrated. A
  // layout effect, so that no event can come in between.
  useLayoutEffect(() => {
    if (!section.current) return;
    const before = takeOver(section.current);
    if (before === "shown") void showToast("registered");
    else if (before === "held") void submit(form.current!);
    else if (before) void showAnswer(before);
    // Focus that came before hydration (and started it) counts as interest too.
    if (before === "shown" || form.current?.contains(document.activeElement)) loadToaster();
  }, []);

  // Typing while an error shows returns the form to idle and clears the message.
  const edit = () => {
    if (state.status !== "error") return;
    dispatch({ type: "edit" });
    setAnnouncement("");
  };

  function onSubmit(event: SubmitEvent<HTMLFormElement>) {
    event.preventDefault();
    void submit(event.currentTarget);
  }

  async function submit(target: HTMLFormElement) {
    loadToaster();
    // A ref, not state: a double click lands before React re-renders the disabled button.
    if (submitting.current) return;
    setAnnouncement("");
    // The fields are uncontrolled: what the browser holds is what was typed, also before the
    // island hydrated. Read before loading disables them.
    const answer = send(target);
    if (!answer) {
      dispatch({ type: "invalid" });
      setAnnouncement(copy.errors.invalid);
      return;
    }
    await showAnswer(answer);
  }

  /** The loading state until the answer comes, then the answer. */
  async function showAnswer(answer: Promise<Outcome>) {
    loadToaster();
    submitting.current = true;
    dispatch({ type: "submit" });
    const outcome = await answer;
    submitting.current = false;
    // On success the fields are cleared, and the panel replaces the form.
    if (outcome === "registered") form.current?.reset();
    dispatch({ type: "answer", outcome });
    setAnnouncement(
      outcome === "registered"
        ? successAnnouncement(copy.success.title, copy.success.message)
        : copy.errors[outcome],
    );
    await showToast(outcome);
  }

  async function showToast(outcome: Outcome) {
    const [{ toast }] = await Promise.all([import("sonner"), toaster.whenReady]);
    const { title, description } = copy.toasts[outcome];
    if (outcome === "registered") toast.success(title, { description });
    else toast.error(title, { description });
  }

  const loading = state.status === "loading";
  const emailInvalid = state.error === "invalid" || state.error === "duplicate";

  return (
    <section ref={section} aria-labelledby={ids.heading} className="glass-strong p-card rounded-3xl">
      {state.status === "success" ? (
        <SuccessPanel
          title={copy.success.title}
          message={copy.success.message}
          headingId={ids.heading}
          headingRef={successHeading}
        />
      ) : (
        // method="post": should a submit ever reach the browser, the fields stay out of the URL
        // (the page's CSP, form-action 'none', then stops it altogether).
        <form
          ref={form}
          method="post"
          noValidate
          onSubmit={onSubmit}
          onFocus={loadToaster}
          className="space-y-field-gap"
        >
          <h2 id={ids.heading} className="font-display text-title font-semibold text-white">
            {copy.heading}
          </h2>
          {/* Left unstyled: browsers hide <noscript> by its display, which a class would override. */}
          <noscript>
            <p className="mb-5 rounded-xl border border-amber-300/40 bg-amber-300/10 px-4 py-3 text-sm text-amber-100">
              {copy.needsJavaScript}
            </p>
          </noscript>
          <Field
            ref={emailInput}
            id={ids.email}
            label={copy.emailLabel}
            name="email"
            type="email"
            required
            autoComplete="email"
            inputMode="email"
            placeholder={copy.emailPlaceholder}
            disabled={loading}
            aria-invalid={emailInvalid}
            description={state.error && { id: ids.message, text: copy.errors[state.error], isError: true }}
            onChange={edit}
          />
          <Field
            id={ids.phone}
            label={copy.phoneLabel}
            name="phone"
            type="tel"
            autoComplete="tel"
            placeholder={copy.phonePlaceholder}
            disabled={loading}
            description={{ id: ids.phoneHint, text: copy.phoneHint }}
            onChange={edit}
          />
          <button
            type="submit"
            disabled={loading}
            className="cta inline-flex w-full items-center justify-center gap-3"
          >
            {loading ? <SendingLabel text={copy.submitting} /> : copy.submit}
          </button>
          <p className="text-center text-sm text-slate-300">{copy.note}</p>
        </form>
      )}
      {/* sonner's own live region is missed by some screen readers (sonner #306). */}
      <p role="status" className="sr-only">
        {announcement}
      </p>
      {toasterWanted && (
        <Suspense>
          <Toasts onMounted={toaster.onMounted} />
        </Suspense>
      )}
    </section>
  );
}
