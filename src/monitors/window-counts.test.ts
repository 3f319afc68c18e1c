import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { QueryService } from '../query/query-service.js';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { parseThresholdQuery } from './monitor.js';
import { WindowCounts } from './window-counts.js';
import { groupValues, type GroupValue } from './window-query.js';

const minute = 60_000;
const hour = 3_600_000;

/**
 * Long windows counted from the last answer (window-counts.ts) answer what the one statement
 * over the window answers, read right after, whatever arrives in between: events of the new
 * minute, late events of any age (inside the window, before it, at its edges), events past its
 * end, events of other datasets and of other queries' groups; and read whole when the kept counts
 * cannot be gone on from (a dataset archived, a window that moved back or past its old end, a
 * retention too short). On the engine of the run: DuckDB here, ClickHouse on its leg.
 */
describe('monitors: long windows counted from the last answer', () => {
  let s: TestServer;
  let queries: QueryService;
  let counts: WindowCounts;
  /** Evaluation times start two hours back, so every event's ts is in the past. */
  let base = 0;

  before(async () => {
    s = await startTestServer();
    const { ctx, events } = s.server;
    queries = new QueryService({ store: events.store, datasets: events.datasets, cursors: ctx.cursors, now: () => s.clock.now(), lane: 'monitors' });
    counts = new WindowCounts({ queries, store: events.store, retentionDays: (tenant) => events.datasets.shortestActiveRetentionDays(tenant) });
    base = Math.floor((s.clock.now() - 2 * hour) / minute) * minute;
  });
  after(() => s.close());

  const ingest = async (dataset: string, events: Array<Record<string, unknown>>) => {
    if (!events.length) return;
    const res = await s.request('POST', `/datasets/${dataset}/ingest`, { json: events });
    assert.equal(res.status, 200, res.text);
  };
  const sorted = (values: GroupValue[]) => values.map((v) => [v.key, v.value] as const).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  /**
   * The statement's answer first (it waits for every acknowledged event), then the counted one:
   * the same groups, the same counts; sums and averages the same but for the rounding of doubles
   * (each read rounds its own sum), within a billionth.
   */
  const agree = async (q: string, from: number, to: number, message: string) => {
    const query = parseThresholdQuery(q);
    const answer = await groupValues(queries, s.tenants.a, query, from, to);
    const whole = sorted(answer);
    const counted = sorted(await counts.values(s.tenants.a, q, query, from, to));
    const close = (a: number | null, b: number | null) => a === b || (a !== null && b !== null && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)));
    const exact = query.stats!.aggregates[0]!.fn === 'count';
    const same = counted.length === whole.length && counted.every(([key, value], i) => key === whole[i]![0] && (exact ? value === whole[i]![1] : close(value, whole[i]![1])));
    if (!same) assert.deepEqual(counted, whole, message);
    return answer;
  };

  test('only count(), sum and avg over windows of 15 minutes or more, without relative times or bins', () => {
    const counted = (q: string, windowMs = hour) => WindowCounts.counts(parseThresholdQuery(q), windowMs);
    assert.ok(counted('severity >= error stats count() by source'));
    assert.ok(counted('stats count()', 24 * hour));
    // Windows under 15 minutes are read whole (docs/monitors.md), to the millisecond.
    assert.ok(counted('payload.map:dust stats count() by source', 15 * minute));
    assert.ok(!counted('payload.map:dust stats count() by source', 15 * minute - 1), 'a short window is read whole');
    assert.ok(!counted('stats count()', 14 * minute), 'a short window is read whole');
    assert.ok(counted('stats sum(payload.n) by source'));
    assert.ok(counted('stats avg(bytes_raw)'));
    assert.ok(!counted('stats max(payload.n)'), 'a maximum cannot be subtracted from');
    assert.ok(!counted('stats p95(payload.n) by source'));
    assert.ok(!counted('stats count_distinct(actor)'));
    assert.ok(!counted('ts > now-2h stats count()'), 'a relative time means another set at each read');
  });

  test('generated steps and events: every counted answer is the statement read right after', async () => {
    const sources = ['s1', 's2', 's3', undefined];
    // Where an event's ts falls, relative to the evaluation after its ingest (to) and the window (1 h).
    const place = fc.oneof(
      fc.integer({ min: -hour - 5 * minute, max: 2 * minute }),
      fc.constantFrom(0, -hour, -hour - 1, -hour + 1, 1, -1, -minute, -hour - minute, -hour + minute, 2 * minute),
    );
    // payload.n: a number with a fraction (sums that round), an integer, a number in quotes (not a number), or none.
    const n = fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }), fc.integer({ min: -50, max: 50 }), fc.constantFrom('7', undefined));
    const event = fc.record({ at: place, source: fc.constantFrom(...sources), event: fc.constantFrom('e1', 'e2'), severity: fc.constantFrom('info', 'error'), dataset: fc.constantFrom('wc1', 'wc2'), n });
    const step = fc.record({ advance: fc.oneof(fc.constantFrom(minute, minute, 0, 1, 30_000), fc.integer({ min: 1, max: 5 * minute })), events: fc.array(event, { maxLength: 12 }) });
    let run = 0;
    const before = { ...counts.reads };
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 6 }), fc.constantFrom('by source', 'by source, event', ''), fc.constantFrom('count()', 'sum(payload.n)', 'avg(payload.n)'), async (steps, by, aggregate) => {
        run++;
        // Each run its own statement (its own kept tallies), over events of every run.
        const q = `(severity >= error OR event == "e2") AND source != "run-${run}" stats ${aggregate} ${by}`;
        let to = base + run * 7 * minute;
        for (const [k, { advance, events }] of steps.entries()) {
          to += advance;
          const byDataset = new Map<string, Array<Record<string, unknown>>>();
          for (const e of events) {
            const list = byDataset.get(e.dataset) ?? [];
            list.push({ ts: new Date(to + e.at).toISOString(), event: e.event, severity: e.severity, message: `run ${run}`, ...(e.source ? { source: e.source } : {}), ...(e.n !== undefined ? { payload: { n: e.n } } : {}) });
            byDataset.set(e.dataset, list);
          }
          for (const [dataset, list] of byDataset) await ingest(dataset, list);
          await agree(q, to - hour, to, `run ${run}, step ${k}`);
        }
      }),
      { numRuns: 18 },
    );
    assert.ok(counts.reads.counted - before.counted >= 18, `the counted path was taken (${counts.reads.counted - before.counted} counted, ${counts.reads.whole - before.whole} whole)`);
  });

  test('without `by`, a window that counts nothing answers one row of 0 on the counted path too, as the statement does', async () => {
    const q = 'event == "none-yet" stats count()';
    let to = base + 120 * minute;
    await ingest('wcz', [{ ts: new Date(to - 3 * minute).toISOString(), event: 'other' }]);
    assert.deepEqual(sorted(await agree(q, to - hour, to, 'first read')), [['{}', 0]]);
    const counted = counts.reads.counted;
    to += minute;
    await ingest('wcz', [{ ts: new Date(to - hour + 30_000).toISOString(), event: 'none-yet' }]);
    assert.deepEqual(sorted(await agree(q, to - hour, to, 'one counted')), [['{}', 1]]);
    to += minute;
    assert.deepEqual(sorted(await agree(q, to - hour, to, 'the one left the window')), [['{}', 0]]);
    to += minute;
    assert.deepEqual(sorted(await agree(q, to - hour, to, 'still nothing')), [['{}', 0]]);
    assert.equal(counts.reads.counted, counted + 3, 'all three on the counted path');
  });

  test('sum and avg: a group whose numbers all left is null, not 0 or a rounding rest; read whole after 60 counted steps', async () => {
    const q = 'event == "sums" stats avg(payload.ms) by source';
    let to = base + 130 * minute;
    const at = (ms: number, source: string, value: unknown) => ingest('wcs', [{ ts: new Date(ms).toISOString(), event: 'sums', source, payload: { ms: value } }]);
    await at(to - 50 * minute, 'a', 0.1);
    await at(to - 40 * minute, 'a', 0.2);
    await at(to - 30 * minute, 'b', 'slow');
    assert.deepEqual(sorted(await agree(q, to - hour, to, 'first read')).map(([k, v]) => [k, v === null ? null : Number(v.toFixed(12))]), [['{"source":"a"}', 0.15], ['{"source":"b"}', null]]);
    const counted = counts.reads.counted;
    to += 11 * minute;
    await at(to - 5 * minute, 'b', 0.7);
    assert.deepEqual(sorted(await agree(q, to - hour, to, '0.1 left, b has a number')).map(([k, v]) => [k, v === null ? null : Number(v.toFixed(12))]), [['{"source":"a"}', 0.2], ['{"source":"b"}', 0.7]]);
    to += 10 * minute;
    await at(to - minute, 'a', 'n/a');
    // 0.1 + 0.2 − 0.1 − 0.2 is not 0 in doubles; with no number left the group answers null, as the statement does.
    assert.deepEqual(sorted(await agree(q, to - hour, to, 'both numbers of a left')), [['{"source":"a"}', null], ['{"source":"b"}', 0.7]]);
    assert.equal(counts.reads.counted, counted + 2, 'both on the counted path');
    const whole = counts.reads.whole;
    for (let k = 0; k < 60; k++) {
      to += minute;
      await agree(q, to - hour, to, `step ${k}`);
    }
    assert.equal(counts.reads.whole, whole + 1, 'one whole read in 60 steps: the rounding of the steps does not add up');
    assert.equal(counts.reads.counted, counted + 61);
  });

  test('sum and avg with more groups than one answer holds: the statement\'s own top 1,000 by the value, nothing kept', async () => {
    const q = 'event == "many" stats avg(payload.ms) by source';
    const to = base + 140 * minute;
    // 1,001 sources, one event each: the statement keeps the 1,000 highest averages (ms 1…1,000),
    // where a read of the tallies (ordered by their events, all 1, then by source) would drop another.
    await ingest('wcm', Array.from({ length: 1_001 }, (_, i) => ({ ts: new Date(to - 10 * minute).toISOString(), event: 'many', source: `s${String(i).padStart(4, '0')}`, payload: { ms: i } })));
    const answer = sorted(await agree(q, to - hour, to, 'first read'));
    assert.equal(answer.length, 1_000);
    assert.ok(!answer.some(([key]) => key === '{"source":"s0000"}'), 'the lowest average is the one left out');
    const whole = counts.reads.whole;
    await agree(q, to - hour + minute, to + minute, 'next: read whole again, nothing was kept');
    assert.equal(counts.reads.whole, whole + 1);
  });

  test('a dataset archived, a window moved back, a gap past the window: read whole, and still the same answer', async () => {
    const q = 'event == "arch" stats count() by source';
    let to = base + 100 * minute;
    const at = (dataset: string, ms: number, source: string) => ingest(dataset, [{ ts: new Date(ms).toISOString(), event: 'arch', source }]);
    await at('wca', to - 10 * minute, 'x');
    await at('wcb', to - 20 * minute, 'x');
    await at('wcb', to - 30 * minute, 'y');
    assert.deepEqual(sorted(await agree(q, to - hour, to, 'first read')), [['{"source":"x"}', 2], ['{"source":"y"}', 1]]);
    to += minute;
    await at('wca', to - 5 * minute, 'x');
    await agree(q, to - hour, to, 'counted');
    const res = await s.request('DELETE', '/datasets/wcb');
    assert.equal(res.status, 200, res.text);
    const whole = counts.reads.whole;
    to += minute;
    assert.deepEqual(sorted(await agree(q, to - hour, to, 'after the archive')), [['{"source":"x"}', 2]]);
    assert.equal(counts.reads.whole, whole + 1, 'other datasets: read whole');
    await agree(q, to - hour - minute, to - minute, 'a window moved back');
    assert.equal(counts.reads.whole, whole + 2);
    to += 2 * hour;
    await at('wca', to - minute, 'z');
    assert.deepEqual(sorted(await agree(q, to - hour, to, 'past the old window')), [['{"source":"z"}', 1]]);
    assert.equal(counts.reads.whole, whole + 3);
  });

  test('a retention no longer than the window and the time since: read whole, as the purge may take counted events', async () => {
    const q = 'event == "ret" stats count()';
    let to = base + 110 * minute;
    await ingest('wcr', [{ ts: new Date(to - 3 * minute).toISOString(), event: 'ret' }]);
    await agree(q, to - 24 * hour, to, 'first');
    to += minute;
    const counted = counts.reads.counted;
    await agree(q, to - 24 * hour, to, 'retention of 7 days or more: counted');
    assert.equal(counts.reads.counted, counted + 1);
    const res = await s.request('PATCH', '/datasets/wcr', { json: { retention_days: 1 } });
    assert.equal(res.status, 200, res.text);
    to += minute;
    const whole = counts.reads.whole;
    await agree(q, to - 24 * hour, to, 'retention of a day');
    assert.equal(counts.reads.whole, whole + 1);
  });
});
