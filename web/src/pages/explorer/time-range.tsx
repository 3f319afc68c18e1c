// The time-range picker: last 15 minutes / hour / 24 hours / 7 days, or a custom from–to in the
// reader's time zone (datetime-local inputs).
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { interval, relativeRanges, type RelativeRange, type TimeRange } from './soql-text';

const pad = (n: number) => String(n).padStart(2, '0');
/** Epoch ms → `YYYY-MM-DDTHH:MM:SS` in local time (the datetime-local value). */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function TimeRangePicker(props: { range: TimeRange; onChange: (range: TimeRange) => void; disabled?: boolean }): JSX.Element {
  const { range } = props;
  const [custom, setCustom] = useState(range.kind === 'custom');
  const initial = interval(range, Date.now());
  const [from, setFrom] = useState(toLocalInput(initial.from));
  const [to, setTo] = useState(toLocalInput(initial.to));
  const [problem, setProblem] = useState('');
  useEffect(() => {
    setCustom(range.kind === 'custom');
    if (range.kind === 'custom') {
      setFrom(toLocalInput(range.from));
      setTo(toLocalInput(range.to));
    }
  }, [range]);

  const apply = () => {
    const a = new Date(from).getTime();
    const b = new Date(to).getTime();
    if (!Number.isFinite(a) || !Number.isFinite(b)) return setProblem('Enter both times.');
    if (a >= b) return setProblem('“From” must be before “To”.');
    setProblem('');
    props.onChange({ kind: 'custom', from: a, to: b });
  };
  return (
    <div class="time-range row">
      <label class="inline">
        <span>Time range</span>
        <select
          aria-label="Time range"
          data-testid="range"
          disabled={props.disabled}
          value={custom ? 'custom' : range.kind === 'relative' ? range.range : 'custom'}
          onChange={(e) => {
            const v = e.currentTarget.value;
            if (v === 'custom') {
              const now = interval(range, Date.now());
              setFrom(toLocalInput(now.from));
              setTo(toLocalInput(now.to));
              setCustom(true);
            } else {
              setCustom(false);
              props.onChange({ kind: 'relative', range: v as RelativeRange });
            }
          }}
        >
          {Object.entries(relativeRanges).map(([key, r]) => (
            <option key={key} value={key}>
              {r.label}
            </option>
          ))}
          <option value="custom">Custom…</option>
        </select>
      </label>
      {custom && (
        <>
          <label class="inline">
            <span>From</span>
            <input type="datetime-local" step={1} value={from} onInput={(e) => setFrom(e.currentTarget.value)} data-testid="range-from" disabled={props.disabled} />
          </label>
          <label class="inline">
            <span>To</span>
            <input type="datetime-local" step={1} value={to} onInput={(e) => setTo(e.currentTarget.value)} data-testid="range-to" disabled={props.disabled} />
          </label>
          <button type="button" onClick={apply} disabled={props.disabled}>
            Apply range
          </button>
          {problem && (
            <span class="note error" role="alert">
              {problem}
            </span>
          )}
        </>
      )}
    </div>
  );
}
