// The monitor form's preview (POST /v1/monitors/preview): the values per group by bin(every)
// over the last 24 h, the condition as a dashed line, and when the monitor would have fired
// shaded in red (drawn on uPlot's canvas, which the CSP does not restrict), also listed in words.
import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import type uPlot from 'uplot';
import { Chart } from '../explorer/chart';
import { ErrorNote, Loading } from '../../components/notes';
import { formatDateTime } from '../../components/units';
import { groupText, type Condition, type Preview } from './model';

const palette = ['#3b82d6', '#d4a72c', '#1e7a3c', '#7a1fa2', '#0e7c86', '#b35900', '#5b6470', '#8c959f'];

function build(preview: Preview, condition: Condition): { data: uPlot.AlignedData; options: (w: number) => uPlot.Options; shown: number; groups: number } {
  const now = Date.now() / 1000;
  const times = [...new Set(preview.points.map((p) => Date.parse(p.ts)))].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  const first = (times[0] ?? now * 1000) / 1000;
  const last = (times[times.length - 1] ?? now * 1000) / 1000;
  const series = new Map<string, { total: number; ys: Array<number | null> }>();
  for (const p of preview.points) {
    const name = groupText(p.group);
    let s = series.get(name);
    if (!s) series.set(name, (s = { total: 0, ys: times.map(() => null) }));
    s.ys[index.get(Date.parse(p.ts))!] = p.value;
    s.total += Math.abs(p.value ?? 0);
  }
  const top = [...series.entries()].sort((a, b) => b[1].total - a[1].total).slice(0, palette.length);
  const firings = preview.firings.map((f) => [Date.parse(f.from) / 1000, Date.parse(f.to) / 1000] as const);
  const marks = (u: uPlot) => {
    const ctx = u.ctx;
    ctx.save();
    ctx.fillStyle = 'rgba(209, 36, 47, 0.16)';
    for (const [from, to] of firings) {
      const x0 = u.valToPos(from, 'x', true);
      const x1 = u.valToPos(to, 'x', true);
      ctx.fillRect(x0, u.bbox.top, Math.max(2, x1 - x0), u.bbox.height);
    }
    const y = u.valToPos(condition.value, 'y', true);
    if (y >= u.bbox.top && y <= u.bbox.top + u.bbox.height) {
      ctx.strokeStyle = '#d1242f';
      ctx.setLineDash([6, 4]);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(u.bbox.left, y);
      ctx.lineTo(u.bbox.left + u.bbox.width, y);
      ctx.stroke();
    }
    ctx.restore();
  };
  return {
    data: [times.map((t) => t / 1000), ...top.map(([, s]) => s.ys)],
    shown: top.length,
    groups: series.size,
    options: (width) => ({
      width,
      height: 220,
      padding: [10, 10, 0, 0],
      cursor: { drag: { x: false, y: false } },
      scales: {
        // The 24 hours the preview covers, however few bins have values (uPlot would stretch a
        // single point's scale to 86,400 of its own units: years).
        x: { time: true, range: () => [Math.min(first, now - 86_400), Math.max(last, now)] },
        y: { range: (_u, min, max) => [Math.min(0, min, condition.value), Math.max(1, max, condition.value) * 1.1] },
      },
      axes: [{}, { size: 60 }],
      series: [{ label: 'time' }, ...top.map(([name], i) => ({ label: name, stroke: palette[i], width: 2, spanGaps: false, points: { show: times.length < 60 } }))],
      hooks: { draw: [marks] },
    }),
  };
}

export function PreviewChart(props: { preview: Preview | undefined; condition: Condition | undefined; loading: boolean; error: unknown; waiting: string }): JSX.Element {
  const { preview, condition } = props;
  const chart = useMemo(() => (preview && condition && preview.points.length ? build(preview, condition) : undefined), [preview, condition?.op, condition?.value]);
  return (
    <section class="preview" aria-label="Preview" aria-busy={props.loading}>
      <h2>Preview: the last 24 hours</h2>
      {!preview && !props.error && (props.loading ? <Loading what="the preview" /> : <p class="muted small">{props.waiting}</p>)}
      <ErrorNote error={props.error} prefix="No preview" />
      {preview && preview.points.length === 0 && <p class="muted small">No events matched in the last 24 hours: nothing to draw.</p>}
      {chart && <Chart options={chart.options} data={chart.data} label="The monitor's value per bin over the last 24 hours, firings shaded" testId="preview-chart" />}
      {chart && chart.groups > chart.shown && (
        <p class="small muted">
          The chart shows the {chart.shown} largest of {chart.groups} groups.
        </p>
      )}
      {preview && (
        <p class="small" data-testid="preview-firings">
          {preview.firings.length === 0
            ? 'It would not have fired.'
            : `It would have fired ${preview.firings.length} time${preview.firings.length === 1 ? '' : 's'} (shaded):`}
        </p>
      )}
      {preview && preview.firings.length > 0 && (
        <ul class="firings small">
          {preview.firings.slice(0, 20).map((f, i) => (
            <li key={i}>
              {groupText(f.group)}: {formatDateTime(f.from)} – {formatDateTime(f.to)}
            </li>
          ))}
          {preview.firings.length > 20 && <li class="muted">and {preview.firings.length - 20} more</li>}
        </ul>
      )}
      <p class="small muted">
        Each bin is one <em>Every</em> interval, while the evaluation looks at the whole <em>Window</em> each time: the preview is close, not exact.
      </p>
    </section>
  );
}
