// A `group by` or `stats` answer: a table of every row and a bar chart (uPlot) beside it. With a
// bin, the chart runs over time (one series per combination of the other by-values, the eight
// largest); without, bars per row (the first 20). The chart plots the first aggregate.
import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import type uPlot from 'uplot';
import { bars, Chart } from './chart';
import type { OnFilter } from './events-table';
import { valueClause } from './soql-text';

export type GroupsAnswer = { field: string; groups: Array<{ value: unknown; count: number }> };
export type StatsAnswer = { stats: Array<{ by: Record<string, unknown>; values: Record<string, number | null> }> };

const palette = ['#3b82d6', '#d4a72c', '#1e7a3c', '#d1242f', '#7a1fa2', '#0e7c86', '#b35900', '#5b6470'];
const MAX_BARS = 20;

function show(value: unknown): string {
  if (value === null || value === undefined) return '(none)';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

const clip = (text: string, n = 14) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

function categoryOptions(labels: string[], seriesLabel: string): (width: number) => uPlot.Options {
  return (width) => ({
    width,
    height: 240,
    padding: [10, 10, 0, 0],
    legend: { show: false },
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    scales: { x: { time: false, range: [-0.5, labels.length - 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
    axes: [
      {
        space: 20,
        incrs: [1],
        rotate: labels.length > 6 ? -40 : 0,
        size: labels.length > 6 ? 80 : 40,
        values: (_u, splits) => splits.map((s) => (Number.isInteger(s) && labels[s] !== undefined ? clip(labels[s]) : '')),
      },
      { size: 60 },
    ],
    series: [{}, { label: seriesLabel, fill: palette[0], stroke: palette[0], width: 0, paths: bars(0.7), points: { show: false } }],
  });
}

function ChartCaption(props: { text: string }): JSX.Element {
  return <p class="small muted chart-caption">{props.text}</p>;
}

export function GroupsView(props: { answer: GroupsAnswer; onFilter: OnFilter }): JSX.Element {
  const { field, groups } = props.answer;
  const shown = groups.slice(0, MAX_BARS);
  const data = useMemo<uPlot.AlignedData>(() => [shown.map((_, i) => i), shown.map((g) => g.count)], [props.answer]);
  const options = useMemo(() => categoryOptions(shown.map((g) => show(g.value)), 'count'), [props.answer]);
  return (
    <section class="aggregate" aria-label="Group by result">
      {groups.length > 0 && <Chart options={options} data={data} label={`Count of events by ${field}, top ${shown.length}`} testId="aggregate-chart" />}
      {groups.length > MAX_BARS && <ChartCaption text={`The chart shows the first ${MAX_BARS} of ${groups.length} groups; the table has them all.`} />}
      <div class="table-wrap">
        <table data-testid="aggregate-table">
          <thead>
            <tr>
              <th scope="col">{field}</th>
              <th scope="col" class="num">
                count
              </th>
            </tr>
          </thead>
          <tbody>
            {groups.map((g) => {
              const clause = valueClause(field, g.value);
              return (
                <tr key={show(g.value)}>
                  <td>
                    {clause ? (
                      <button type="button" class="val" title={`Add ${clause} to the query`} onClick={() => props.onFilter(clause)}>
                        {show(g.value)}
                      </button>
                    ) : (
                      show(g.value)
                    )}
                  </td>
                  <td class="num">{g.count.toLocaleString()}</td>
                </tr>
              );
            })}
            {groups.length === 0 && (
              <tr>
                <td colSpan={2} class="muted">
                  No events match.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function StatsView(props: { answer: StatsAnswer }): JSX.Element {
  const rows = props.answer.stats;
  const byKeys = rows[0] ? Object.keys(rows[0].by) : [];
  const valueKeys = rows[0] ? Object.keys(rows[0].values) : [];
  const binKey = byKeys.find((k) => /^bin\(/.test(k));
  const first = valueKeys[0] ?? 'count()';

  const chart = useMemo((): { options: (w: number) => uPlot.Options; data: uPlot.AlignedData; caption?: string } | undefined => {
    if (rows.length < 1 || valueKeys.length === 0) return undefined;
    if (binKey) {
      const others = byKeys.filter((k) => k !== binKey);
      const times = [...new Set(rows.map((r) => Date.parse(String(r.by[binKey]))))].sort((a, b) => a - b);
      const index = new Map(times.map((t, i) => [t, i]));
      const groups = new Map<string, { total: number; ys: Array<number | null> }>();
      for (const r of rows) {
        const name = others.map((k) => show(r.by[k])).join(' · ') || first;
        let g = groups.get(name);
        if (!g) groups.set(name, (g = { total: 0, ys: times.map(() => null) }));
        const v = r.values[first] ?? null;
        g.ys[index.get(Date.parse(String(r.by[binKey])))!] = v;
        g.total += v ?? 0;
      }
      const top = [...groups.entries()].sort((a, b) => b[1].total - a[1].total).slice(0, palette.length);
      const single = top.length === 1;
      return {
        data: [times.map((t) => t / 1000), ...top.map(([, g]) => g.ys)],
        caption: groups.size > top.length ? `The chart shows the ${top.length} largest of ${groups.size} series; the table has them all.` : undefined,
        options: (width) => ({
          width,
          height: 240,
          padding: [10, 10, 0, 0],
          cursor: { drag: { x: false, y: false } },
          scales: { x: { time: true }, y: { range: (_u, min, max) => [Math.min(0, min), Math.max(1, max) * 1.1] } },
          axes: [{}, { size: 60 }],
          series: [
            { label: 'time' },
            ...top.map(([name], i) => ({
              label: name,
              stroke: palette[i],
              fill: single ? palette[i] : undefined,
              width: single ? 0 : 2,
              paths: single ? bars(0.9, 1) : undefined,
              spanGaps: false,
              points: { show: !single },
            })),
          ],
        }),
      };
    }
    const shown = rows.slice(0, MAX_BARS);
    const labels = shown.map((r) => byKeys.map((k) => show(r.by[k])).join(' · ') || first);
    return {
      data: [shown.map((_, i) => i), shown.map((r) => r.values[first] ?? null)],
      caption: rows.length > MAX_BARS ? `The chart shows the first ${MAX_BARS} of ${rows.length} rows; the table has them all.` : undefined,
      options: categoryOptions(labels, first),
    };
  }, [props.answer]);

  return (
    <section class="aggregate" aria-label="Statistics result">
      {chart && <Chart options={chart.options} data={chart.data} label={`${first} by ${byKeys.join(', ') || 'nothing'}`} testId="aggregate-chart" />}
      {chart?.caption && <ChartCaption text={chart.caption} />}
      <div class="table-wrap">
        <table data-testid="aggregate-table">
          <thead>
            <tr>
              {byKeys.map((k) => (
                <th scope="col" key={k}>
                  {k}
                </th>
              ))}
              {valueKeys.map((k) => (
                <th scope="col" class="num" key={k}>
                  {k}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={i}>
                {byKeys.map((k) => (
                  <td key={k}>{k === binKey ? new Date(String(r.by[k])).toLocaleString() : show(r.by[k])}</td>
                ))}
                {valueKeys.map((k) => (
                  <td class="num" key={k}>
                    {r.values[k] === null || r.values[k] === undefined ? '—' : r.values[k]!.toLocaleString(undefined, { maximumFractionDigits: 3 })}
                  </td>
                ))}
              </tr>
            ))}
            {rows.length === 0 && (
              <tr>
                <td colSpan={Math.max(1, byKeys.length + valueKeys.length)} class="muted">
                  No events match.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
