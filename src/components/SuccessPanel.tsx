import type { Ref } from "react";

/**
 * What replaces the form once someone has signed up. The island renders it, and so does the page,
 * into a <template> that shows it before the island has hydrated
 * (src/lib/sign-up-before-hydration.ts): one markup for both, so that React finds the page as it
 * would render it.
 */
export default function SuccessPanel({
  title,
  message,
  headingId,
  headingRef,
}: {
  title: string;
  message: string;
  headingId?: string;
  headingRef?: Ref<HTMLHeadingElement>;
}) {
  return (
    <div className="py-4 text-center" data-testid="success-panel">
      <div
        aria-hidden="true"
        className="mx-auto mb-4 grid size-14 place-items-center rounded-full bg-emerald-400/15 text-3xl text-emerald-300 ring-1 ring-emerald-300/40"
      >
        ✓
      </div>
      <h2
        ref={headingRef}
        id={headingId}
        tabIndex={-1}
        className="font-display text-title font-semibold text-white outline-none"
      >
        {title}
      </h2>
      <p className="mt-3 font-semibold tracking-wide text-cyan-200">{message}</p>
    </div>
  );
}
