/**
 * Hot payload keys on ClickHouse must not change an answer. Random events are
 * written as the engine's loader writes them (RowBinary, the flattened payload, and the slot
 * columns by clickhouse-hot-layouts.ts's writeHotSlot) in three phases, in ts order: without
 * hot keys (sometimes left out, so that every row has a layout), with a first layout per
 * dataset, then with a second (a key changing type, keys added and dropped, slots differing
 * between datasets so a key has several places). Random filters, `group by` keys and `stats`
 * are compiled with no hot reads, with the reads of the layouts the rows carry (scoped by the
 * query, sometimes narrowed to the layouts' ts range) with and without the types their slots
 * hold (as hotLayouts reports them: the `group by` key then groups by the columns that vary),
 * and with the reads of a compile made before the second layouts existed (their rows then left
 * out by the guard, as rows loaded after the compile are). In half the runs the hot keys' values
 * keep one type per phase (ping a number, then a string), so that the types narrow the key.
 * Filters must equal the in-memory predicate; groups and stats must equal the answer without
 * hot reads over the same rows. Needs OPS_TEST_CLICKHOUSE_URL.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { parseClickHouseUrl } from '../../config/clickhouse-url.js';
import { bindParams, type SqlValue } from './literal.js';
import { flattenPayload } from './payload-paths.js';
import { RowBinaryWriter } from './row-binary.js';
import { clickhouseEventColumns, eventsColumnsDdl } from './clickhouse-schema.js';
import { clickHouseSlots, hotSlotColumns, writeHotSlot } from './clickhouse-hot-layouts.js';
import { statsSelect } from '../event-store.js';
import { groupByStatement, runGroupBy } from './clickhouse-engine.js';
import type { HotKey, HotLayout } from '../hot-columns.js';
import { compilePredicate, parseSoql, printSoql, readScope, type Expr, type SoqlQuery } from '../../soql/index.js';
import { clickHouseHotReadsOf, compileClickHouseFilter, compileClickHouseGroupKey, compileStats, hotReadsFor, noClickHouseHotReads, type ClickHouseHotReads } from '../soql-compile.js';
import { legs } from '../../test-support/ci.js';
import { hotGuard } from './clickhouse-soql-hot.js';
import type { MemoryEvent } from '../../soql/predicate.js';
import { DATASET_IDS, NOW, eventsArb, narrow, queryArb } from '../../soql/testkit.test.js';

const url = process.env['OPS_TEST_CLICKHOUSE_URL'];
const target = url ? parseClickHouseUrl(url) : null;
const onLeg = legs.clickhouse();
const DB = `soql_hot_${randomBytes(6).toString('hex')}`;

async function post(sql: string, body?: Buffer): Promise<string> {
  const res = await fetch(`${target!.hosts[0]}/?query=${encodeURIComponent(sql)}`, {
    method: 'POST',
    body: body ? new Uint8Array(body) : '',
    headers: { 'X-ClickHouse-User': target!.username, 'X-ClickHouse-Key': target!.password },
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse: ${text.slice(0, 2000)}\n${sql.slice(0, 3000)}`);
  return text;
}
const run = (sql: string, params: readonly SqlValue[] = []): Promise<string> => post(bindParams(sql, params));
const rowsOf = (text: string): Array<Record<string, unknown>> => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

const ids = [...DATASET_IDS.values()];
const key = (pointer: string, type: HotKey['type']): HotKey => ({ pointer, type });
/** First keys; the second set changes ping's type, drops s and b/a, adds n, `~/k`, `x y` and a path into an array. */
const firstKeys = [key('/ping', 'number'), key('/s', 'string'), key('/a', 'boolean'), key('/b/a', 'string')];
const secondKeys = [key('/n', 'number'), key('/ping', 'string'), key('/a', 'boolean'), key('/~0~1k', 'string'), key('/x y', 'number'), key('/arr/0', 'number')];

/** Per dataset, two layouts made as the engine makes them; the third dataset's keys come in another order (other slots). */
function layoutsOf(): { first: HotLayout[]; second: HotLayout[] } {
  const first: HotLayout[] = [];
  const second: HotLayout[] = [];
  ids.forEach((datasetId, i) => {
    const order = (keys: HotKey[]) => (i === 2 ? [...keys].reverse() : keys);
    const a = clickHouseSlots([], order(firstKeys))!;
    const b = clickHouseSlots(a, order(secondKeys))!;
    first.push({ id: 1 + i, datasetId, slots: a });
    second.push({ id: 10 + i, datasetId, slots: b });
  });
  return { first, second };
}
const { first, second } = layoutsOf();
const slotsInUse = [...new Set([...first, ...second].flatMap((l) => l.slots.map((s) => s.slot)))].sort((a, b) => a - b);
const hotColumns = ['hot_layout', ...slotsInUse.flatMap((s) => hotSlotColumns(s).map((c) => c.name))];

const TENANT = 't1';
const OTHER = 't2';

/** The rows as the loader writes them (clickhouse-engine.ts load), with each event's layout. */
async function load(events: readonly MemoryEvent[], layoutOf: (e: MemoryEvent, i: number) => HotLayout | undefined): Promise<void> {
  await run(`TRUNCATE TABLE ${DB}.events`);
  if (!events.length) return;
  const rows = new RowBinaryWriter();
  const nullable = (s: string | null) => (s === null ? rows.uint8(1) : (rows.uint8(0), rows.string(s)));
  for (const tenant of [TENANT, OTHER]) {
    events.forEach((e, i) => {
      const payload = JSON.stringify(e.payload);
      const flat = flattenPayload(payload);
      rows.string(tenant);
      rows.string(DATASET_IDS.get(e.dataset)!);
      rows.int64(e.ts);
      rows.string(e.event_id.toLowerCase());
      rows.int64(e.seq);
      rows.int64(e.ingested_at);
      rows.uint8(e.severity);
      rows.string(e.event);
      nullable(e.actor);
      nullable(e.source);
      rows.string(e.message);
      rows.string(payload);
      rows.int32(e.bytes_raw);
      rows.stringArray(flat.paths);
      rows.uint8Array(flat.types);
      rows.stringArray(flat.text);
      rows.float64Array(flat.numbers);
      rows.stringArray(flat.json);
      rows.string(''); // log_id
      const layout = layoutOf(e, i);
      rows.uint32(layout?.id ?? 0);
      for (const slot of slotsInUse) writeHotSlot(rows, flat, layout?.slots.find((s) => s.slot === slot)?.pointer);
    });
  }
  const columns = [...clickhouseEventColumns.map((c) => c.name), ...hotColumns].join(', ');
  await post(`INSERT INTO ${DB}.events (${columns}) FORMAT RowBinary`, rows.written);
}

/**
 * What hotLayouts answers for these rows: per dataset, the layouts its rows carry with their ts
 * ranges and (`withTypes`) the type bits of their slots, and the current one.
 */
function storedLayouts(
  events: readonly MemoryEvent[],
  layoutOf: (e: MemoryEvent, i: number) => HotLayout | undefined,
  known: readonly HotLayout[],
  current: readonly HotLayout[],
  withTypes: boolean,
): HotLayout[] {
  const out = new Map<string, HotLayout>();
  const typed = (l: HotLayout): HotLayout => (withTypes ? { ...l, types: [], version: 'v1' } : l);
  events.forEach((e, i) => {
    const l = layoutOf(e, i);
    if (l && !known.includes(l)) return; // loaded under a layout the compile did not know
    const datasetId = DATASET_IDS.get(e.dataset)!;
    const id = l?.id ?? 0;
    const entry = out.get(`${datasetId}|${id}`) ?? typed({ id, datasetId, slots: l?.slots ?? [], stored: { minTs: e.ts, maxTs: e.ts } });
    entry.stored = { minTs: Math.min(entry.stored!.minTs, e.ts), maxTs: Math.max(entry.stored!.maxTs, e.ts) };
    if (entry.types) {
      const flat = flattenPayload(JSON.stringify(e.payload));
      for (const s of entry.slots) {
        const k = flat.paths.indexOf(s.pointer);
        entry.types[s.slot] = (entry.types[s.slot] ?? 0) | (1 << (k < 0 ? 0 : flat.types[k]!));
      }
    }
    out.set(`${datasetId}|${id}`, entry);
  });
  for (const l of current) {
    const entry = out.get(`${l.datasetId}|${l.id}`);
    if (entry) entry.current = true;
    else out.set(`${l.datasetId}|${l.id}`, typed({ ...l, current: true }));
  }
  return [...out.values()];
}

/** The hot keys' values of one type each, per phase (ping a number, then a string), the rest left as generated. */
function oneTypePerKey(payload: Record<string, unknown>, phase: number): Record<string, unknown> {
  const out = { ...payload };
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
  const number = (v: unknown) => (typeof v === 'number' ? v : text(v).length);
  if ('ping' in out) out['ping'] = phase < 2 ? number(out['ping']) : text(out['ping']);
  if ('s' in out) out['s'] = text(out['s']);
  if ('a' in out) out['a'] = typeof out['a'] === 'boolean' ? out['a'] : text(out['a']).length % 2 === 0;
  if ('n' in out) out['n'] = Math.trunc(number(out['n']) % 1e6) || 0;
  return out;
}

async function selectSeqs(where: string, params: readonly SqlValue[]): Promise<number[]> {
  return rowsOf(await run(`SELECT seq FROM ${DB}.events WHERE tenant = ? AND (${where}) ORDER BY seq FORMAT JSONEachRow`, [TENANT, ...params])).map((r) => Number(r['seq']));
}

async function selectGroups(query: SoqlQuery, hot: ClickHouseHotReads, extra: string): Promise<unknown> {
  const { where, params } = compileClickHouseFilter(query, { now: NOW, datasetIds: DATASET_IDS, clickHouseHot: hot });
  // As the engine's aggregate sends it (two steps for a hot key).
  const statement = groupByStatement(`${DB}.events`, compileClickHouseGroupKey(query.groupBy!, hot), `tenant = ? AND ${extra} AND (${where})`, 1000);
  return groupRows(statement, [...statement.params, TENANT, ...params]);
}

/** Narrowed `group by` statements that found a type they did not assume and ran as exact ones. */
let exactReruns = 0;

/** A groupByStatement's answer as the engine's aggregate reads it (runGroupBy): value and count. */
async function groupRows(statement: ReturnType<typeof groupByStatement>, params: readonly SqlValue[]): Promise<unknown> {
  const rows = await runGroupBy<Record<string, unknown>>(
    statement,
    params,
    async (sql, p) => {
      if (sql === statement.check?.exactSql) exactReruns++;
      return rowsOf(await run(`${sql} FORMAT JSONEachRow`, p));
    },
    async (sql, p) => JSON.parse(await run(`${sql} FORMAT JSON`, p)) as { data: Array<Record<string, unknown>>; totals?: Record<string, unknown> },
  );
  return rows.map((r) => ({ value: r['value'], n: r['n'] }));
}

async function selectStats(statsText: string, hot: ClickHouseHotReads, extra: string): Promise<unknown> {
  const query = parseSoql(statsText);
  const stats = compileStats(query.stats!, 'clickhouse', hot);
  const { where, params } = compileClickHouseFilter(query, { now: NOW, datasetIds: DATASET_IDS, clickHouseHot: hot });
  const { select, groupBy, params: selectParams } = statsSelect({ filter: { where, params: [] }, ...stats, limit: 1000 });
  return rowsOf(
    await run(`SELECT ${select} FROM ${DB}.events WHERE tenant = ? AND ${extra} AND (${where})${groupBy} ORDER BY ${stats.orderBy} LIMIT 1000 FORMAT JSONEachRow`, [
      ...selectParams,
      TENANT,
      ...params,
    ]),
  );
}

const fields = ['payload.ping', 'payload.s', 'payload.a', 'payload.b.a', 'payload.n', 'payload.`x y`', 'payload.`~/k`', 'payload.arr.0', 'source'];
const statsArb = fc
  .tuple(
    fc.array(fc.tuple(fc.constantFrom('sum', 'avg', 'min', 'max', 'p50', 'p95', 'count_distinct', 'count'), fc.constantFrom(...fields.slice(0, -1))), { minLength: 1, maxLength: 3 }),
    fc.array(fc.constantFrom(...fields), { maxLength: 2 }),
    fc.constantFrom('', 'dataset:game ', 'dataset:auth '),
  )
  .map(([aggs, by, where]) => {
    const items = [...new Set(aggs.map(([fn, f]) => (fn === 'count' ? 'count()' : `${fn}(${f})`)))];
    const byText = [...new Set(by)];
    return `${where}stats ${items.join(', ')}${byText.length ? ` by ${byText.join(', ')}` : ''}`;
  });

onLeg.describe('hot payload keys on a ClickHouse server', () => {
  before(async () => {
    await run(`CREATE DATABASE ${DB}`);
    await run(`CREATE TABLE ${DB}.events (${eventsColumnsDdl}) ENGINE = MergeTree ORDER BY (tenant, ts)`);
    await run(`ALTER TABLE ${DB}.events ADD COLUMN hot_layout UInt32, ${slotsInUse.flatMap((s) => hotSlotColumns(s).map((c) => `ADD COLUMN ${c.name} ${c.type}`)).join(', ')}`);
  });
  after(async () => {
    await run(`DROP DATABASE IF EXISTS ${DB}`);
  });

  test('hot columns change no answer: 200+ random queries, keys hot mid-way with changing types and slots', async () => {
    let queries = 0;
    let columnReads = 0;
    /** `group by` keys grouped by fewer than all four slot columns (narrowed by their types). */
    let narrowed = 0;
    await fc.assert(
      fc.asyncProperty(
        eventsArb(30),
        fc.array(queryArb(narrow), { minLength: 2, maxLength: 4 }),
        statsArb,
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom(...fields),
        async (generated, qs, statsText, withoutLayout, sinceSecond, typed, grouped) => {
          const n = generated.length;
          const phase = (i: number) => (withoutLayout && i < n / 3 ? 0 : i < (2 * n) / 3 ? 1 : 2);
          // In ts order, one a minute: the phases are ranges of ts.
          const events = generated.map((e, i) => ({ ...e, ts: NOW - 3_600_000 + i * 60_000, ...(typed ? { payload: oneTypePerKey(e.payload, phase(i)) } : {}) }));
          const layoutOf = (e: MemoryEvent, i: number): HotLayout | undefined => {
            const p = phase(i);
            const datasetId = DATASET_IDS.get(e.dataset)!;
            return p === 0 ? undefined : (p === 1 ? first : second).find((l) => l.datasetId === datasetId);
          };
          await load(events, layoutOf);
          const all = storedLayouts(events, layoutOf, [...first, ...second], second, true);
          const untyped = storedLayouts(events, layoutOf, [...first, ...second], second, false);
          const stale = storedLayouts(events, layoutOf, first, first, true);
          const firstPhase1 = events.findIndex((_, i) => phase(i) === 1);
          const cut = sinceSecond && firstPhase1 >= 0 ? events[firstPhase1]!.ts : undefined;
          const extra = n ? [parseSoql('payload.ping exists group by payload.ping'), parseSoql(`group by ${grouped}`)] : [];
          for (const generatedQuery of [...qs, ...extra]) {
            // Sometimes only the rows with a layout, by a top-level ts bound.
            const query: SoqlQuery =
              cut === undefined
                ? generatedQuery
                : {
                    ...generatedQuery,
                    filter: {
                      type: 'and',
                      position: 0,
                      items: [
                        { type: 'compare', field: { kind: 'canonical', name: 'ts' }, op: '>=', value: { type: 'time', time: { kind: 'absolute', ms: cut } }, position: 0 },
                        ...(generatedQuery.filter ? [generatedQuery.filter] : []),
                      ] as Expr[],
                    },
                  };
            // As the query service gets them (the `group by` key's types with them).
            const readsOf = (layouts: HotLayout[]) => hotReadsFor('clickhouse', layouts, query, { now: NOW, datasetIds: DATASET_IDS }) as ClickHouseHotReads;
            const readings: Array<[string, ClickHouseHotReads]> = [
              ['no hot columns', noClickHouseHotReads],
              ['every layout', readsOf(all)],
              ['every layout, types not known', readsOf(untyped)],
              ['compiled before the second layouts', readsOf(stale)],
              // Another ingester loaded rows of types this process never saw (many
              // ingesters): each slot's types cut to the lowest one; the answer must not move.
              ['types of another ingester unknown', readsOf(all.map((l) => (l.types ? { ...l, types: l.types.map((b) => b & -b) } : l)))],
            ];
            const matches = events.filter(compilePredicate(query, { now: NOW }));
            for (const [name, hot] of readings) {
              queries++;
              const guard = hotGuard(hot);
              if (guard) columnReads++;
              const { where, params } = compileClickHouseFilter(query, { now: NOW, datasetIds: DATASET_IDS, clickHouseHot: hot });
              // Rows under a layout the compile did not know are left out, as rows loaded after it would be.
              const expected = matches.filter((e) => !guard || hot.layouts.includes(layoutOf(e, e.seq - 1)?.id ?? 0)).map((e) => e.seq);
              const label = `${printSoql(query)} (${name}, ${withoutLayout ? 'some rows without layout' : 'every row with one'})`;
              assert.deepEqual(await selectSeqs(where, params), expected, label);
              if (query.groupBy) {
                const two = compileClickHouseGroupKey(query.groupBy, hot).twoStep;
                if (two && two.keys.length < 4) narrowed++;
                assert.deepEqual(await selectGroups(query, hot, guard ?? '1'), await selectGroups(query, noClickHouseHotReads, guard ?? '1'), `${label} group by`);
              }
            }
          }
          const statsQuery = parseSoql(statsText);
          for (const layouts of [all, stale]) {
            queries++;
            const hot = clickHouseHotReadsOf(layouts, readScope(statsQuery, { now: NOW, datasetIds: DATASET_IDS }));
            const guard = hotGuard(hot) ?? '1';
            assert.deepEqual(await selectStats(statsText, hot, guard), await selectStats(statsText, noClickHouseHotReads, guard), statsText);
          }
        },
      ),
      { numRuns: 60 },
    );
    assert.ok(queries >= 200, `${queries} queries`);
    assert.ok(columnReads >= 50, `only ${columnReads} of ${queries} read hot columns`);
    assert.ok(narrowed >= 20, `only ${narrowed} group by keys narrowed by their types`);
    assert.ok(exactReruns >= 5, `only ${exactReruns} narrowed group by keys found a type they did not assume`);
    console.log(`# ${queries} queries, ${columnReads} of them reading hot columns, ${narrowed} group by keys narrowed by their types`);
  });

  test('a key read from columns only where every row of the read has it', () => {
    const query = (q: string) => parseSoql(q);
    const ctx = { now: NOW, datasetIds: DATASET_IDS };
    const rows = (datasetId: string, id: number, minTs: number, maxTs: number, current = false): HotLayout => ({
      id,
      datasetId,
      slots: id === 0 ? [] : first.find((l) => l.datasetId === datasetId)!.slots,
      stored: { minTs, maxTs },
      ...(current ? { current } : {}),
    });
    const game = ids[0]!;
    const auth = ids[1]!;
    const layouts = [rows(game, 0, NOW - 7_200_000, NOW - 3_600_000), rows(game, 1, NOW - 3_600_000, NOW, true), { id: 0, datasetId: auth, slots: [], current: true }];
    const read = (q: string) => clickHouseHotReadsOf(layouts, readScope(query(q), ctx));
    // Over every dataset: auth's rows have no hot keys.
    assert.equal(read('payload.ping > 1').places.size, 0);
    // Over game: its older rows have none.
    assert.equal(read('dataset:game AND payload.ping > 1').places.size, 0);
    // Over game's last hour: every row has layout 1.
    const hot = read('dataset:game AND ts >= now-30m AND payload.ping > 1');
    assert.deepEqual([...hot.places.keys()], ['/ping', '/s', '/a', '/b/a']);
    assert.deepEqual(hot.layouts, [1]);
    const { where, params } = compileClickHouseFilter(query('dataset:game AND ts >= now-30m AND payload.ping > 1'), { ...ctx, clickHouseHot: hot });
    assert.match(where, /^\(hot_layout IN \(1\) AND /);
    assert.match(where, /hot_t0 = 2 AND hot_n0 > /);
    assert.doesNotMatch(where, /payload_paths/);
    assert.ok(!params.includes('/ping'));
    // `dataset in (…)`, negations and ranges narrow the scope too.
    assert.equal(read('dataset in (game) AND ts > now-30m AND payload.ping > 1').places.size, 4);
    assert.equal(read('dataset != auth AND dataset != matchmaking AND ts > now-30m AND payload.ping > 1').places.size, 4);
    // Not a top-level condition: the whole scope.
    assert.equal(read('(dataset:game OR dataset:auth) AND ts > now-30m AND payload.ping > 1').places.size, 0);
    // A key every layout has, in two slots: multiIf over hot columns only.
    const two: HotLayout[] = [
      { id: 1, datasetId: game, slots: first[0]!.slots, current: true },
      { id: 3, datasetId: auth, slots: first[2]!.slots, current: true },
    ];
    const both = clickHouseHotReadsOf(two, readScope(query('payload.ping > 1'), ctx));
    const ping = both.places.get('/ping')!;
    assert.equal(ping.length, 2);
    const group = compileClickHouseGroupKey({ kind: 'payload', path: ['ping'] }, both);
    assert.match(group.sql, /^nullIf\(nullIf\(multiIf\(multiIf\(hot_layout IN \(1\), hot_j\d+, hot_j\d+\) != '', /);
    assert.doesNotMatch(group.sql, /payload_/);
    assert.deepEqual(group.params, []);
  });
});

test('a hot `group by` key groups by the slot columns its types leave varying', () => {
  const game = ids[0]!;
  const slots = first[0]!.slots; // ping, s, a, b/a
  const slotOf = (pointer: string) => slots.find((s) => s.pointer === pointer)!.slot;
  const bits = (...codes: number[]) => codes.reduce((b, c) => b | (1 << c), 0);
  const form = (pointer: string, typeBits: number | undefined, version: string | null = 'v7') => {
    const types: number[] = [];
    if (typeBits !== undefined) types[slotOf(pointer)] = typeBits;
    const layout: HotLayout = { id: 1, datasetId: game, slots, stored: { minTs: 0, maxTs: NOW }, current: true, ...(typeBits !== undefined ? { types } : {}), ...(version ? { version } : {}) };
    const q = parseSoql(`dataset:game group by payload.${pointer.slice(1).replace('/', '.')}`);
    const hot = hotReadsFor('clickhouse', [layout], q, { now: NOW, datasetIds: DATASET_IDS }) as ClickHouseHotReads;
    return { keys: compileClickHouseGroupKey(q.groupBy!, hot).twoStep?.keys, relied: [...hot.relied] };
  };
  // Strings only (the bench's map): the text alone, like `group by source`.
  assert.deepEqual(form('/s', bits(1)), { keys: ['key_s'], relied: [[game, 'v7']] });
  // Sometimes missing: the type too.
  assert.deepEqual(form('/s', bits(0, 1)).keys, ['key_t', 'key_s']);
  assert.deepEqual(form('/ping', bits(0, 2)).keys, ['key_t', 'key_n']);
  assert.deepEqual(form('/a', bits(3)).keys, ['key_s']);
  // Objects or arrays: their JSON text is the only column telling them apart.
  assert.deepEqual(form('/b/a', bits(1, 5)).keys, ['key_t', 'key_s', 'key_j']);
  // Missing everywhere: one group by the type.
  assert.deepEqual(form('/s', bits(0)).keys, ['key_t']);
  // Types not known, or not versioned: all four, relying on nothing.
  assert.deepEqual(form('/s', undefined), { keys: ['key_t', 'key_s', 'key_n', 'key_j'], relied: [] });
  assert.deepEqual(form('/s', bits(1), null), { keys: ['key_t', 'key_s', 'key_n', 'key_j'], relied: [] });
  // The query service's third attempt (withJson) relies on no types either.
  const layout: HotLayout = { id: 1, datasetId: game, slots, current: true, types: [bits(1)], version: 'v7' };
  const q = parseSoql('dataset:game group by payload.ping');
  const third = hotReadsFor('clickhouse', [layout], q, { now: NOW, datasetIds: DATASET_IDS }, { withJson: true }) as ClickHouseHotReads;
  assert.equal(third.relied.size, 0);
  assert.equal(compileClickHouseGroupKey(q.groupBy!, third).twoStep?.keys.length, 4);
  // Stats keep the one-step key (their aggregates other than count would need merging).
  assert.match(compileClickHouseGroupKey(q.groupBy!, third).sql, /^nullIf\(nullIf\(multiIf\(hot_j/);
});
