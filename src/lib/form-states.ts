// The sign-up form's states and what moves it between them: idle → loading → success | error, and
// back to idle when someone types while an error shows.
import type { Outcome } from "./sign-up-request";

export type FormStatus = "idle" | "loading" | "success" | "error";

/** Which error message the form shows; the copy itself lives in the page. */
export type FormError = "invalid" | "duplicate" | "failed";

export interface FormState {
  status: FormStatus;
  error: FormError | null;
}

export type FormEvent =
  { type: "submit" } | { type: "invalid" } | { type: "answer"; outcome: Outcome } | { type: "edit" };

export const initialFormState: FormState = { status: "idle", error: null };

export function formReducer(state: FormState, event: FormEvent): FormState {
  switch (event.type) {
    case "submit":
      // One request at a time: a second submit while loading changes nothing.
      return state.status === "loading" ? state : { status: "loading", error: null };
    case "invalid":
      return state.status === "loading" ? state : { status: "error", error: "invalid" };
    case "answer":
      if (state.status !== "loading") return state;
      return event.outcome === "registered"
        ? { status: "success", error: null }
        : { status: "error", error: event.outcome };
    case "edit":
      return state.status === "error" ? initialFormState : state;
  }
}

/** What the status region says once the success panel shows. */
export const successAnnouncement = (title: string, message: string) => `${title}. ${message}`;
