import { useEffect, useSyncExternalStore } from "react";
import { createPortal } from "react-dom";
import { Toaster } from "sonner";

// The design's corner, bottom right, wherever the viewport leaves room for a toast beside the
// sign-up card: on each side of the centre, half the card (max-w-lg, 256 px), a gap (16 px), the
// close button sonner hangs past the toast's corner (7 px), the toast (356 px) and its offset from
// the edge (24 px): 1318 px in all. On a narrower screen a toast there would sit on the card's
// button or note, so toasts come in at the top, over the headline and the countdown, which the
// visitor has read already.
const ROOM_BESIDE_THE_CARD = "(min-width: 83rem)";

function subscribe(onChange: () => void) {
  const query = matchMedia(ROOM_BESIDE_THE_CARD);
  query.addEventListener("change", onChange);
  return () => query.removeEventListener("change", onChange);
}

const roomBesideTheCard = () => matchMedia(ROOM_BESIDE_THE_CARD).matches;

/**
 * sonner's Toaster, loaded with sonner itself on first use. `onMounted` fires after the
 * Toaster has subscribed (a child's effects run before its parent's), so no toast is missed.
 *
 * It lives in the form's island (sonner #427), but is rendered into <body>, so that no ancestor
 * with a filter or a transform can become the containing block of its `position: fixed` and hold
 * the toasts within the card instead of the viewport.
 */
export default function Toasts({ onMounted }: { onMounted: () => void }) {
  useEffect(onMounted, [onMounted]);
  const wide = useSyncExternalStore(subscribe, roomBesideTheCard);
  return createPortal(
    <Toaster theme="dark" richColors closeButton position={wide ? "bottom-right" : "top-center"} />,
    document.body,
  );
}
