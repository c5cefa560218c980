/**
 * The submit button's label while a sign-up travels: a spinner and the loading text. The island
 * renders it, and so does the page, into a <template> that shows it before the island has
 * hydrated (src/lib/sign-up-before-hydration.ts): one markup for both.
 */
export default function SendingLabel({ text }: { text: string }) {
  return (
    <>
      <span
        aria-hidden="true"
        className="size-4 animate-spin rounded-full border-2 border-white/30 border-t-white"
      />
      {text}
    </>
  );
}
