import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNote } from './notes';

/**
 * A button that asks first, in a modal <dialog> (keyboard: focus moves in, Escape cancels),
 * then runs `action`; its failure is shown in the dialog.
 */
export function ConfirmButton(props: {
  label: string;
  title: string;
  children: ComponentChildren;
  confirmLabel?: string;
  danger?: boolean;
  action: () => Promise<unknown>;
  testId?: string;
}): JSX.Element {
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (open) dialog.current?.showModal();
    else dialog.current?.close();
  }, [open]);
  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await props.action();
      setOpen(false);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class={props.danger ? 'danger' : ''} data-testid={props.testId} onClick={() => setOpen(true)}>
        {props.label}
      </button>
      <dialog ref={dialog} onClose={() => setOpen(false)} aria-label={props.title}>
        <h2>{props.title}</h2>
        <div>{props.children}</div>
        <ErrorNote error={error} />
        <div class="row end">
          <button type="button" onClick={() => setOpen(false)}>
            Cancel
          </button>
          <button type="button" class={props.danger ? 'danger' : 'primary'} disabled={busy} onClick={run}>
            {props.confirmLabel ?? props.label}
          </button>
        </div>
      </dialog>
    </>
  );
}
