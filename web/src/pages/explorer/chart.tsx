// A uPlot chart that follows its container's width (ResizeObserver) and is rebuilt when its
// options or data change. The numbers behind it are also in a table beside it on every page
// that uses it; `label` names the chart for screen readers.
import type { JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export function Chart(props: {
  options: (width: number) => uPlot.Options;
  data: uPlot.AlignedData;
  label: string;
  testId?: string;
  class?: string;
}): JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(200, Math.floor(el.clientWidth));
    const plot = new uPlot(props.options(width()), props.data, el);
    let last = width();
    const observer = new ResizeObserver(() => {
      const w = width();
      if (w !== last) {
        last = w;
        plot.setSize({ width: w, height: plot.height });
      }
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [props.options, props.data]);
  return <div ref={box} class={`chart ${props.class ?? ''}`} role="img" aria-label={props.label} data-testid={props.testId} />;
}

export const severityColors: Record<string, string> = {
  debug: '#8c959f',
  info: '#3b82d6',
  warn: '#d4a72c',
  error: '#d1242f',
  fatal: '#7a1fa2',
};

/** Bars, for uPlot's series `paths`. */
export const bars = (size = 0.85, align: 0 | 1 = 0) => uPlot.paths.bars!({ size: [size, 80], align });
