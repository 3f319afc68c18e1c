// A moment in words relative to now ("in 40 s", "12 s ago", "due now"), kept current every
// second, with the exact time on hover.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { relativeTime } from './model';

export function RelativeTime(props: { iso: string | null; empty?: string; due?: boolean; testId?: string }): JSX.Element {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!props.iso) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [props.iso]);
  if (!props.iso) return <span class="muted" data-testid={props.testId}>{props.empty ?? '–'}</span>;
  return (
    <time dateTime={props.iso} title={new Date(props.iso).toLocaleString()} data-testid={props.testId}>
      {relativeTime(props.iso, now, props.due)}
    </time>
  );
}
