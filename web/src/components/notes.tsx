import type { JSX } from 'preact';
import { describeError } from '../api/errors';

/** An error in words, announced to screen readers. */
export function ErrorNote(props: { error: unknown; prefix?: string }): JSX.Element | null {
  if (props.error === undefined || props.error === null) return null;
  return (
    <p class="note error" role="alert">
      {props.prefix ? `${props.prefix}: ` : ''}
      {describeError(props.error)}
    </p>
  );
}

export function Loading(props: { what?: string }): JSX.Element {
  return (
    <p class="note muted" aria-live="polite">
      Loading{props.what ? ` ${props.what}` : ''}…
    </p>
  );
}
