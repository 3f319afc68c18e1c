// POST /v1/monitors/preview: a threshold monitor's values by bin(every) over the last 24 h and
// when it would have fired. Asked again 600 ms after the form's threshold fields stop changing;
// an answer for older fields is dropped.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, data } from '../../../api/client';
import type { Condition, Preview } from '../model';

export interface PreviewInput {
  q: string;
  every: string;
  condition: Condition;
  for: string;
  no_data: 'ok' | 'alerting';
}

export interface PreviewState {
  preview: Preview | undefined;
  /** The input the preview shown was made for. */
  input: PreviewInput | undefined;
  loading: boolean;
  error: unknown;
}

/** `input` undefined: nothing to preview (a match monitor, or the condition is not a number yet). */
export function usePreview(input: PreviewInput | undefined, delayMs = 600): PreviewState {
  const [state, setState] = useState<PreviewState>({ preview: undefined, input: undefined, loading: false, error: undefined });
  const key = input ? JSON.stringify(input) : '';
  const latest = useRef(key);
  useEffect(() => {
    latest.current = key;
    if (!input) {
      setState({ preview: undefined, input: undefined, loading: false, error: undefined });
      return;
    }
    setState((s) => ({ ...s, loading: true }));
    const timer = setTimeout(() => {
      data(api.POST('/v1/monitors/preview', { body: { ...input } })).then(
        (preview) => {
          if (latest.current === key) setState({ preview, input, loading: false, error: undefined });
        },
        (error: unknown) => {
          if (latest.current === key) setState({ preview: undefined, input, loading: false, error });
        },
      );
    }, delayMs);
    return () => clearTimeout(timer);
  }, [key]);
  return state;
}
