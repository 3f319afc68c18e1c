// The volume histogram: `<filter in the range> stats count() by severity, bin(<width>)`, bars
// stacked by severity (uPlot draws each severity's running total, the tallest first), the width
// chosen so the range holds at most 120 bins. Dragging over it narrows the time range.
import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import type uPlot from 'uplot';
import { bars, Chart, severityColors } from './chart';
import { localTime } from './events-table';
import { durationMs, severities, type Severity } from './soql-text';

export interface HistogramData {
  from: number;
  to: number;
  width: string;
  /** stats rows: by {severity, bin(w)} → values {count()} */
  rows: Array<{ by: Record<string, unknown>; values: Record<string, number | null> }>;
}

interface Series {
  xs: number[];
  counts: Record<Severity, number[]>;
  /** per severity over the whole range */
  totals: Record<Severity, number>;
  total: number;
}

function toSeries(h: HistogramData): Series {
  const w = durationMs(h.width);
  const first = Math.floor(h.from / w) * w;
  const n = Math.max(1, Math.ceil((h.to - first) / w));
  const xs = Array.from({ length: n }, (_, i) => (first + i * w) / 1000);
  const counts = Object.fromEntries(severities.map((s) => [s, new Array<number>(n).fill(0)])) as Record<Severity, number[]>;
  let total = 0;
  const binKey = `bin(${h.width})`;
  for (const row of h.rows) {
    const at = Date.parse(String(row.by[binKey]));
    const severity = row.by.severity as Severity;
    const i = Math.floor((at - first) / w);
    const count = row.values['count()'] ?? 0;
    if (i >= 0 && i < n && counts[severity]) {
      counts[severity][i]! += count;
      total += count;
    }
  }
  const totals = Object.fromEntries(severities.map((s) => [s, counts[s].reduce((a, b) => a + b, 0)])) as Record<Severity, number>;
  return { xs, counts, totals, total };
}

export function Histogram(props: { data: HistogramData; onSelect: (from: number, to: number) => void }): JSX.Element {
  const { data, onSelect } = props;
  const series = useMemo(() => toSeries(data), [data]);
  // Stacked: each severity's running total from debug up; drawn from the top (fatal, the total) down.
  const order = [...severities].reverse();
  const plotData = useMemo<uPlot.AlignedData>(() => {
    const running = series.xs.map(() => 0);
    const stacked: Record<string, number[]> = {};
    for (const s of severities) {
      series.counts[s].forEach((c, i) => (running[i]! += c));
      stacked[s] = [...running];
    }
    return [series.xs, ...order.map((s) => stacked[s]!)];
  }, [series]);
  const options = useMemo(
    () =>
      (width: number): uPlot.Options => ({
        width,
        height: 150,
        padding: [8, 8, 0, 0],
        cursor: { drag: { x: true, y: false, setScale: false }, points: { show: false } },
        select: { show: true, left: 0, top: 0, width: 0, height: 0 },
        // uPlot's legend where there is room (the key below on narrow screens): the bar under
        // the cursor, its start and each severity's count; away from the bars, the whole range's.
        legend: { show: matchMedia('(min-width: 721px)').matches, live: true },
        scales: {
          x: { time: true, range: () => [data.from / 1000, data.to / 1000] },
          y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] },
        },
        axes: [{ space: 70 }, { size: 44, values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? v.toLocaleString() : '')) }],
        series: [
          { label: 'bar', value: (_u: uPlot, v: number | null) => (v === null ? 'whole range' : localTime(new Date(v * 1000).toISOString()).slice(0, 19)) },
          ...order.map((s) => ({
            label: s,
            fill: severityColors[s],
            stroke: severityColors[s],
            width: 0,
            paths: bars(0.9, 1),
            points: { show: false },
            // the legend shows the severity's own count (not the running total drawn), in the bar
            // under the cursor or, with none, over the range
            value: (_u: uPlot, _v: number | null, _si: number, i: number | null) => (i === null ? series.totals[s] : (series.counts[s][i] ?? 0)).toLocaleString(),
          })),
        ],
        hooks: {
          setSelect: [
            (u: uPlot) => {
              if (u.select.width < 3) return;
              const from = u.posToVal(u.select.left, 'x') * 1000;
              const to = u.posToVal(u.select.left + u.select.width, 'x') * 1000;
              u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
              if (to > from) onSelect(Math.floor(from), Math.ceil(to));
            },
          ],
        },
      }),
    [plotData, data, onSelect],
  );
  const label = `Events over time by severity: ${series.total.toLocaleString()} from ${new Date(data.from).toLocaleString()} to ${new Date(data.to).toLocaleString()}, ${data.width} bars; drag over the chart to narrow the time range.`;
  return (
    <section class="histogram" aria-label="Volume histogram">
      <div class="row small muted histogram-head">
        <span data-testid="histogram-total">
          {series.total.toLocaleString()} events · bars of {data.width}
        </span>
        <span>Drag over the bars to narrow the range.</span>
      </div>
      <Chart options={options} data={plotData} label={label} testId="histogram" />
      <p class="row small severity-key" aria-hidden="true">
        {severities.map((s) => (
          <span key={s}>
            <span class={`swatch sw-${s}`} />
            {s} {series.totals[s].toLocaleString()}
          </span>
        ))}
      </p>
    </section>
  );
}
