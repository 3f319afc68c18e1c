// Create a dataset (POST /v1/datasets): name, optional retention and default severity.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { PlanErrorNote } from '../../components/quota-error';
import { nameHint, namePattern, type Severity } from './dataset-rules';
import { useCreateDataset } from './use-dataset-writes';
import { DefaultSeverityField } from './severity-field';

export function CreateDataset(props: { retention: { days: number; plan: string } | undefined; onCreated: (name: string) => Promise<void> }): JSX.Element {
  const createDataset = useCreateDataset();
  const [name, setName] = useState('');
  const [retention, setRetention] = useState('');
  const [severity, setSeverity] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const create = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await createDataset({ name, ...(retention ? { retention_days: Number(retention) } : {}), ...(severity ? { default_severity: severity as Severity } : {}) });
      setName('');
      setRetention('');
      setSeverity('');
      await props.onCreated(created.name);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const { retention: plan } = props;
  return (
    <section aria-labelledby="new-dataset">
      <h2 id="new-dataset">New dataset</h2>
      <form class="create-dataset" onSubmit={create}>
        <label>
          Name
          <input value={name} required maxLength={64} pattern={namePattern} title={nameHint} autoComplete="off" onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Retention (days)
          <input
            type="number"
            inputMode="numeric"
            min={1}
            max={plan?.days}
            value={retention}
            placeholder={plan ? `plan's ${plan.days}` : "plan's"}
            onInput={(e) => setRetention(e.currentTarget.value)}
          />
        </label>
        <DefaultSeverityField value={severity} onChange={setSeverity} />
        <button type="submit" class="primary" disabled={busy}>
          Create dataset
        </button>
      </form>
      <p class="muted small">{nameHint} Retention defaults to the plan's and may not exceed it{plan ? ` (${plan.days} days on ${plan.plan})` : ''}.</p>
      <PlanErrorNote error={error} />
    </section>
  );
}
