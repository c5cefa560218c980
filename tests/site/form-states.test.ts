import { describe, expect, it } from "vitest";
import { formReducer, initialFormState, type FormEvent, type FormState } from "../../src/lib/form-states";

const idle = initialFormState;
const loading: FormState = { status: "loading", error: null };
const success: FormState = { status: "success", error: null };
const invalid: FormState = { status: "error", error: "invalid" };
const duplicate: FormState = { status: "error", error: "duplicate" };

describe("formReducer", () => {
  it.each<[string, FormState, FormEvent, FormState]>([
    // idle → loading on submit.
    ["submit from idle", idle, { type: "submit" }, loading],
    // A second submit while loading changes nothing: one request per submission.
    ["submit while loading", loading, { type: "submit" }, loading],
    // Retrying after an error starts a new request.
    ["submit from error", duplicate, { type: "submit" }, loading],
    // Client validation fails: error, nothing sent.
    ["invalid from idle", idle, { type: "invalid" }, invalid],
    // loading → success.
    ["registered", loading, { type: "answer", outcome: "registered" }, success],
    // loading → error, per outcome.
    ["duplicate", loading, { type: "answer", outcome: "duplicate" }, duplicate],
    ["failed", loading, { type: "answer", outcome: "failed" }, { status: "error", error: "failed" }],
    // An answer that arrives when no request is pending is ignored.
    ["stray answer", idle, { type: "answer", outcome: "registered" }, idle],
    // Typing while in error resets to idle and clears the message.
    ["edit in error", duplicate, { type: "edit" }, idle],
    // Typing otherwise changes nothing.
    ["edit in idle", idle, { type: "edit" }, idle],
    ["edit in success", success, { type: "edit" }, success],
  ])("%s", (_name, state, event, expected) => {
    expect(formReducer(state, event)).toEqual(expected);
  });
});
