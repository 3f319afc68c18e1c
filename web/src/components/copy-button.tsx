import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * A compact Copy button for a value that is not shown in a field (a URL in a grid card): copies
 * with navigator.clipboard and says "Copied" for a few seconds, announced politely. Where the
 * browser refuses, a read-only field with the value appears, selected, for Ctrl+C.
 */
export function CopyButton(props: { value: string; label?: string; what?: string; testId?: string }): JSX.Element {
  const [state, setState] = useState<'idle' | 'copied' | 'refused'>('idle');
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (state === 'copied') {
      const timer = setTimeout(() => setState('idle'), 2500);
      return () => clearTimeout(timer);
    }
    if (state === 'refused') {
      field.current?.focus();
      field.current?.select();
    }
    return undefined;
  }, [state]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.value);
      setState('copied');
    } catch {
      setState('refused');
    }
  };
  const label = props.label ?? 'Copy';
  return (
    <span class="copy-button">
      <button type="button" data-testid={props.testId} aria-label={props.what ? `${label} ${props.what}` : undefined} onClick={() => void copy()}>
        {state === 'copied' ? 'Copied ✓' : label}
      </button>
      <span class="sr-only" role="status" aria-live="polite">
        {state === 'copied' ? 'Copied' : ''}
      </span>
      {state === 'refused' && (
        <label class="small">
          The browser did not allow copying; press Ctrl+C (⌘C):
          <input ref={field} class="mono" type="text" readOnly value={props.value} onBlur={() => setState('idle')} />
        </label>
      )}
    </span>
  );
}
