import type { InputHTMLAttributes, Ref } from "react";

interface FieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, "className"> {
  id: string;
  label: string;
  /** A line under the input that describes it: a hint, or an error message. */
  description?: { id: string; text: string; isError?: boolean } | null;
  ref?: Ref<HTMLInputElement>;
}

/**
 * A labelled text input of the sign-up form, with its description wired for screen readers.
 * Uncontrolled: the browser keeps what is typed, also before the island hydrates.
 */
export default function Field({ id, label, description, ref, ...input }: FieldProps) {
  return (
    <div className="space-y-1.5">
      <label htmlFor={id} className="block text-sm font-medium text-slate-200">
        {label}
      </label>
      <input ref={ref} id={id} aria-describedby={description?.id} className="field" {...input} />
      {description && (
        <p
          id={description.id}
          className={description.isError ? "text-sm font-medium text-rose-300" : "text-sm text-slate-300"}
          data-testid={description.isError ? "form-message" : undefined}
        >
          {description.text}
        </p>
      )}
    </div>
  );
}
