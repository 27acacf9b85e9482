// A button whose action is asked about first, inline where the button is (no modal: it fits a phone and
// keeps the page readable around it): the question with Confirm and Keep, the focus on Keep, Escape or
// Keep closing it, and the focus back on the button it came from.
import { useEffect, useId, useRef, useState } from 'preact/hooks';

export function ConfirmButton({
  children,
  label,
  question,
  onConfirm,
  confirm = { text: 'Confirm' },
  keep: keepAs = { text: 'Keep' },
}: {
  /** The button's text. */
  children: string;
  /** The button's accessible name when its text alone does not say what it acts on. */
  label?: string;
  question: string;
  onConfirm: () => void;
  /** The answers' texts, and their accessible names where the text alone does not say what they act on. */
  confirm?: { text: string; label?: string };
  keep?: { text: string; label?: string };
}) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const trigger = useRef<HTMLButtonElement>(null);
  const keep = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (open) keep.current?.focus();
  }, [open]);
  const close = () => {
    setOpen(false);
    trigger.current?.focus();
  };
  return (
    <>
      <button
        ref={trigger}
        type="button"
        class="danger"
        aria-label={label}
        aria-expanded={open}
        onClick={() => setOpen(!open)}
      >
        {children}
      </button>
      {open && (
        <div
          class="confirm"
          role="alertdialog"
          aria-labelledby={id}
          onKeyDown={(e) => {
            if (e.key === 'Escape') {
              e.preventDefault();
              close();
            }
          }}
        >
          <p id={id}>{question}</p>
          <button
            type="button"
            class="danger"
            aria-label={confirm.label}
            onClick={() => {
              close();
              onConfirm();
            }}
          >
            {confirm.text}
          </button>
          <button ref={keep} type="button" aria-label={keepAs.label} onClick={close}>
            {keepAs.text}
          </button>
        </div>
      )}
    </>
  );
}
