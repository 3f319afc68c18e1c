// The explorer's histogram (POST /v1/query): the reader's filter alone, whatever its clause,
// `stats count() by severity, bin(<w>)` over the range, `w` the narrowest width giving at most
// 120 bins. Run with the query (same `runKey`); an answer for an older run is dropped.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { StatsAnswer } from './aggregate';
import type { HistogramData } from './histogram';
import { binWidth, boundsText, filterOf, interval, withBounds, type TimeRange } from './soql-text';
import { postQuery } from './use-query-run';

export interface HistogramRun {
  histogram: { q: string; data?: HistogramData; error?: unknown } | undefined;
  /** The `runKey` whose histogram (or failure) is shown; '' while it runs. */
  settled: string;
}

export function useHistogram(q: string, range: TimeRange, runKey: string, enabled: boolean): HistogramRun {
  const [histogram, setHistogram] = useState<HistogramRun['histogram']>();
  const [settled, setSettled] = useState('');
  const seq = useRef(0);
  useEffect(() => {
    if (!enabled) return;
    const id = ++seq.current;
    const span = interval(range, Date.now());
    const width = binWidth(span.to - span.from);
    const histogramQ = withBounds(`${filterOf(q)} stats count() by severity, bin(${width})`, boundsText(range));
    setSettled('');
    setHistogram((prev) => ({ q, data: prev?.data }));
    postQuery(histogramQ.q)
      .then(
        (body) => id === seq.current && setHistogram({ q, data: { ...span, width, rows: (body as StatsAnswer).stats ?? [] } }),
        (error: unknown) => id === seq.current && setHistogram({ q, error }),
      )
      .finally(() => id === seq.current && setSettled(runKey));
  }, [runKey, enabled]);
  return { histogram, settled };
}
