import type { JSX } from 'preact';
import { useRef, useState } from 'preact/hooks';
import './copy-field.css';

/**
 * A secret or link shown in a read-only field with a Copy button (navigator.clipboard; where the
 * browser refuses, the text is selected so Ctrl+C copies it). "Copied" is announced politely.
 */
export function CopyField(props: { label: string; value: string; testId?: string }): JSX.Element {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'yes' | 'select' | undefined>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.value);
      setCopied('yes');
    } catch {
      input.current?.focus();
      input.current?.select();
      setCopied('select');
    }
  };
  return (
    <div class="copy-field">
      <label>
        {props.label}
        <input
          ref={input}
          class="mono"
          type="text"
          readOnly
          value={props.value}
          data-testid={props.testId}
          spellcheck={false}
          autoComplete="off"
          onFocus={(e) => e.currentTarget.select()}
        />
      </label>
      <div class="row">
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <span class="small" role="status" aria-live="polite">
          {copied === 'yes' ? 'Copied' : copied === 'select' ? 'The browser did not allow copying: the text is selected, press Ctrl+C (⌘C).' : ''}
        </span>
      </div>
    </div>
  );
}

/** An ISO date-time in the reader's locale, with the exact value on hover; `empty` when null. */
export function When(props: { iso: string | null | undefined; empty?: string }): JSX.Element {
  if (!props.iso) return <span class="muted">{props.empty ?? '–'}</span>;
  const date = new Date(props.iso);
  return (
    <time dateTime={props.iso} title={props.iso}>
      {date.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })}
    </time>
  );
}
