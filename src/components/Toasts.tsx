import { useEffect } from "react";
import { Toaster } from "sonner";

/**
 * sonner's Toaster, loaded with sonner itself on first use. `onMounted` fires after the
 * Toaster has subscribed (a child's effects run before its parent's), so no toast is missed.
 */
export default function Toasts({ onMounted }: { onMounted: () => void }) {
  useEffect(onMounted, [onMounted]);
  return <Toaster theme="dark" richColors closeButton position="bottom-right" />;
}
