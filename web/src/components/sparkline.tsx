// A small line of values over time (uPlot on a canvas): no axes, no legend, no cursor. The
// numbers behind it are in its accessible name, so a screen reader is not left with a picture.
import type { JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export function Sparkline(props: {
  /** x values: seconds since the epoch (uPlot's unit), ascending. */
  times: number[];
  values: number[];
  label: string;
  width?: number;
  height?: number;
  testId?: string;
}): JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  const width = props.width ?? 120;
  const height = props.height ?? 28;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const css = getComputedStyle(el).getPropertyValue('--accent').trim();
    const accent = /^#[0-9a-f]{6}$/i.test(css) ? css : '#2456c7';
    const max = Math.max(1, ...props.values);
    const plot = new uPlot(
      {
        width,
        height,
        pxAlign: false,
        cursor: { show: false },
        legend: { show: false },
        select: { show: false, left: 0, top: 0, width: 0, height: 0 },
        scales: { x: { time: false }, y: { range: [0, max * 1.08] } },
        axes: [{ show: false }, { show: false }],
        series: [{}, { stroke: accent, width: 1.5, fill: `${accent}26`, points: { show: false } }],
      },
      [props.times, props.values],
      el,
    );
    return () => plot.destroy();
  }, [props.times, props.values, width, height]);
  return <div ref={box} class="sparkline" role="img" aria-label={props.label} title={props.label} data-testid={props.testId} />;
}
