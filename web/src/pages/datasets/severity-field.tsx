import type { JSX } from 'preact';
import { severities } from './dataset-rules';

/** The dataset's default severity ('' = none, which ingest reads as info), as the create and edit forms both ask it. */
export function DefaultSeverityField(props: { value: string; onChange: (value: string) => void }): JSX.Element {
  return (
    <label>
      Default severity
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        <option value="">none (info)</option>
        {severities.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
    </label>
  );
}
