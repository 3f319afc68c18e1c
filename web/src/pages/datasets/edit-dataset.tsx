// Edit one dataset in a modal dialog: name, retention, default severity (PATCH /v1/datasets/{name},
// only the fields changed).
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { PlanErrorNote } from '../../components/quota-error';
import { nameHint, namePattern, type Severity, type Summary } from './dataset-rules';
import { useUpdateDataset } from './use-dataset-writes';
import { DefaultSeverityField } from './severity-field';

/** Name, retention and default severity of one dataset, in a modal dialog (PATCH /v1/datasets/{name}). */
export function EditDataset(props: { dataset: Summary; maxRetention: number | undefined; onSaved: (message: string, rename?: { from: string; to: string }) => Promise<void> }): JSX.Element {
  const d = props.dataset;
  const dialog = useRef<HTMLDialogElement>(null);
  const update = useUpdateDataset();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(d.name);
  const [retention, setRetention] = useState(String(d.retention_days));
  const [severity, setSeverity] = useState<string>(d.default_severity ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (open) {
      setName(d.name);
      setRetention(String(d.retention_days));
      setSeverity(d.default_severity ?? '');
      setError(undefined);
      dialog.current?.showModal();
    } else dialog.current?.close();
  }, [open]);

  const save = async (event: Event) => {
    event.preventDefault();
    const body: { name?: string; retention_days?: number; default_severity?: Severity | null } = {};
    if (name !== d.name) body.name = name;
    if (Number(retention) !== d.retention_days) body.retention_days = Number(retention);
    if (severity !== (d.default_severity ?? '')) body.default_severity = severity === '' ? null : (severity as Severity);
    if (Object.keys(body).length === 0) return setOpen(false);
    setBusy(true);
    setError(undefined);
    try {
      const saved = await update(d.name, body);
      setOpen(false);
      await props.onSaved(`Dataset ${saved.name} saved.`, body.name ? { from: d.name, to: saved.name } : undefined);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const id = `edit-${d.name}`;
  return (
    <>
      <button type="button" aria-label={`Edit ${d.name}`} data-testid={`edit-${d.name}`} onClick={() => setOpen(true)}>
        Edit
      </button>
      <dialog ref={dialog} onClose={() => setOpen(false)} aria-labelledby={`${id}-title`}>
        <form class="stack" onSubmit={save}>
          <h2 id={`${id}-title`}>Edit dataset {d.name}</h2>
          <label>
            Name
            <input value={name} required maxLength={64} pattern={namePattern} title={nameHint} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <p class="muted small">Renaming keeps every event; queries, tail and ingest use the new name from now on.</p>
          <label>
            Retention (days)
            <input type="number" inputMode="numeric" min={1} max={props.maxRetention} required value={retention} onInput={(e) => setRetention(e.currentTarget.value)} />
          </label>
          {props.maxRetention !== undefined && <p class="muted small">Your plan keeps events at most {props.maxRetention} days.</p>}
          <DefaultSeverityField value={severity} onChange={setSeverity} />
          <PlanErrorNote error={error} />
          <div class="row end">
            <button type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button type="submit" class="primary" disabled={busy}>
              Save
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** POST /v1/datasets: a dataset before its first event (with its retention and default severity). */
