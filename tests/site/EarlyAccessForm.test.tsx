// @vitest-environment jsdom
// The form island's states, validation and outcomes in a simulated DOM. The Supabase client is
// replaced by a fake whose answers the test controls; the browser tests use the real one.
import { act, cleanup, render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import EarlyAccessForm, { beforeHydration, type EarlyAccessCopy } from "../../src/components/EarlyAccessForm";

interface Answer {
  error: { code?: string; message: string } | null;
}

const inserted: unknown[] = [];
let answer: PromiseWithResolvers<Answer>;

const fakeClient = {
  from: (table: string) => ({
    insert: (row: unknown) => {
      inserted.push({ table, row });
      return { select: () => ({ abortSignal: () => answer.promise }) };
    },
  }),
};

// Hoisted with vi.mock, which runs before this module's own lines.
const { getSupabase } = vi.hoisted(() => ({ getSupabase: vi.fn() }));
vi.mock("../../src/lib/supabase", () => ({ getSupabase }));
getSupabase.mockImplementation(async () => fakeClient);

// jsdom lays nothing out and has no matchMedia, which the toaster asks where to stand: a narrow
// screen, always. Where toasts land is the browser tests' business (tests/site/browser/toasts.spec.ts).
vi.stubGlobal("matchMedia", (media: string) => ({
  media,
  matches: false,
  addEventListener: () => {},
  removeEventListener: () => {},
}));

// Test-only strings: the island must show whatever copy the page hands it.
const copy: EarlyAccessCopy = {
  heading: "Heading",
  emailLabel: "Your email",
  emailPlaceholder: "email placeholder",
  phoneLabel: "Your phone",
  phonePlaceholder: "phone placeholder",
  phoneHint: "phone hint",
  submit: "Send",
  submitting: "Sending",
  note: "note",
  needsJavaScript: "needs JavaScript",
  errors: { invalid: "INVALID", duplicate: "DUPLICATE", failed: "FAILED" },
  toasts: {
    registered: { title: "T-registered", description: "D-registered" },
    duplicate: { title: "T-duplicate", description: "D-duplicate" },
    failed: { title: "T-failed", description: "D-failed" },
  },
  success: { title: "Success title", message: "Success message" },
};

const email = () => screen.getByLabelText("Your email");
const phone = () => screen.getByLabelText("Your phone");
const button = () => screen.getByRole("button", { name: /^(Send|Sending)$/ });
const formMessage = () => screen.queryByTestId("form-message");

beforeEach(() => {
  inserted.length = 0;
  answer = Promise.withResolvers<Answer>();
});
afterEach(cleanup);

async function submit(emailText: string, phoneText = "") {
  const user = userEvent.setup();
  render(<EarlyAccessForm copy={copy} />);
  if (emailText) await user.type(email(), emailText);
  if (phoneText) await user.type(phone(), phoneText);
  await user.click(button());
  return user;
}

describe("validation", () => {
  it.each([
    // Empty.
    ["", "empty"],
    // No '@'.
    ["future.example.com", "no @"],
    // Has '@' but the browser's own email check rejects it.
    ["a@", "browser check"],
  ])("%j (%s) shows the message and sends nothing", async (text) => {
    await submit(text);
    expect(formMessage()?.textContent).toBe("INVALID");
    expect(email().getAttribute("aria-invalid")).toBe("true");
    expect(email().getAttribute("aria-describedby")).toBe(formMessage()?.id);
    expect(inserted).toHaveLength(0);
    expect(screen.getByRole("status").textContent).toBe("INVALID");
  });

  it("keeps required and type=email on the field", () => {
    render(<EarlyAccessForm copy={copy} />);
    expect(email().getAttribute("type")).toBe("email");
    expect(email().hasAttribute("required")).toBe(true);
    expect(phone().getAttribute("type")).toBe("tel");
    expect(phone().getAttribute("autocomplete")).toBe("tel");
  });
});

describe("states", () => {
  it("loading disables everything and sends one normalised row", async () => {
    await submit("  Visitor@Example.COM ", "  +1 555 ");
    expect(button().textContent).toBe("Sending");
    expect((button() as HTMLButtonElement).disabled).toBe(true);
    expect((email() as HTMLInputElement).disabled).toBe(true);
    expect((phone() as HTMLInputElement).disabled).toBe(true);
    expect(inserted).toEqual([
      { table: "early_access", row: { email: "visitor@example.com", phone: "+1 555" } },
    ]);
  });

  it("success replaces the form with the panel", async () => {
    await submit("a@b.co");
    await act(async () => answer.resolve({ error: null }));
    expect(screen.queryByRole("textbox")).toBeNull();
    expect(screen.getByRole("heading", { name: "Success title" })).toBeTruthy();
    expect(screen.getByText("Success message", { exact: true })).toBeTruthy();
    expect(screen.getByRole("status").textContent).toBe("Success title. Success message");
    expect(await screen.findByText("T-registered")).toBeTruthy();
    expect(screen.getByText("D-registered")).toBeTruthy();
  });

  it.each([
    // Postgres' unique violation.
    ["duplicate", { error: { code: "23505", message: "duplicate key" } }, "DUPLICATE", "T-duplicate"],
    // Anything else.
    ["failure", { error: { code: "", message: "TypeError: Failed to fetch" } }, "FAILED", "T-failed"],
  ])(
    "%s shows its message and toast, and typing clears the message",
    async (_name, reply, message, toast) => {
      const user = await submit("a@b.co");
      await act(async () => answer.resolve(reply));
      expect(formMessage()?.textContent).toBe(message);
      expect(screen.getByRole("status").textContent).toBe(message);
      const toastElement = (await screen.findByText(toast)).closest("[data-sonner-toast]");
      expect(toastElement?.getAttribute("data-type")).toBe("error");
      expect((email() as HTMLInputElement).disabled).toBe(false);
      expect(button().textContent).toBe("Send");
      expect(document.activeElement).toBe(email());

      await user.type(email(), "x");
      expect(formMessage()).toBeNull();
      expect(email().getAttribute("aria-invalid")).toBe("false");
      expect(screen.getByRole("status").textContent).toBe("");
    },
  );

  it("sends one request however often it is submitted", async () => {
    const user = await submit("a@b.co");
    await user.keyboard("{Enter}");
    await user.click(button());
    expect(inserted).toHaveLength(1);
  });
});

describe("before React hydrates the island", () => {
  it("makes the Supabase client at the visitor's first move toward the form, not before", () => {
    const island = document.createElement("astro-island");
    island.innerHTML = '<form><input name="email" type="email"></form>';
    document.body.append(island);
    try {
      getSupabase.mockClear();
      beforeHydration(island);
      expect(getSupabase).not.toHaveBeenCalled();
      island.querySelector("input")!.dispatchEvent(new FocusEvent("focusin", { bubbles: true }));
      expect(getSupabase).toHaveBeenCalledTimes(1);
    } finally {
      island.remove();
    }
  });
});
