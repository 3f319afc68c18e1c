import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import protobuf from 'protobufjs';
import snappy from 'snappy';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { matchAll } from '../engine/event-store.js';
import type { TestTenant } from '../test-support/test-server.js';
import type { IngestTarget } from '../events/dataset-service.js';
import { pushProto } from './loki/push-proto.js';
import { decodeResponse, logsRequest, postLogs, toProtobuf } from '../test-support/ingest/otlp-test-requests.js';

/**
 * A dataset is created by the write that stores its first event (docs/decisions.md, "Datasets
 * are created by a stored event"): a request refused whole — 400, 401, 402, 413, 415 — or whose
 * every event fails alone leaves the dataset list, the audit log and the usage as they were, on
 * every ingest route. The free plan's cap of 3 datasets makes a slot taken by a refusal visible.
 */

// Loki's push.proto read by protobufjs on its own, then snappy's block format, as Promtail sends.
const lokiRoot = protobuf.parse(pushProto, { keepCase: true }).root;
lokiRoot.add(protobuf.Root.fromJSON(protobuf.common.get('google/protobuf/timestamp.proto')!).lookup('google')!);
const PushRequest = lokiRoot.lookupType('logproto.PushRequest');
const lokiProtobuf = (labels: string, lines: string[]) =>
  snappy.compressSync(Buffer.from(PushRequest.encode(PushRequest.fromObject({ streams: [{ labels, entries: lines.map((line) => ({ line })) }] })).finish()));
const lokiJson = (dataset: string, lines: string[]) => JSON.stringify({ streams: [{ stream: { dataset }, values: lines.map((line, i) => [`${1_700_000_000_000 + i}000000`, line]) }] });

const ndjson = (...lines: unknown[]) => `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`;
const many = (n: number) => Array.from({ length: n }, (_, i) => ({ event: `e${i}` }));
/** A line past the 256 KB bound of one event: refused alone. */
const hugeLine = 'x'.repeat(256_001);

interface Answer {
  status: number;
  text: string;
}

/** Everything a request could leave behind, as the organisation's API shows it (and the events). */
interface Trace {
  datasets: string[];
  audit: Array<{ id: string; action: string }>;
  usage: unknown;
  events: number;
}

describe('a request refused whole leaves no dataset, no audit entry and no usage, on every ingest route', () => {
  let s: TestServer;
  let a: TestTenant;
  before(async () => {
    s = await startTestServer({ plan: 'free', env: { OPS_FEATURES: 'logs' } });
    a = s.tenants.a;
  });
  after(() => s.close());

  const trace = async (tenant: TestTenant = a): Promise<Trace> => {
    const [datasets, audit, usage] = await Promise.all([
      s.request('GET', '/datasets', { token: tenant.token }),
      s.request('GET', `/orgs/${tenant.orgId}/audit?limit=100`, { token: tenant.token }),
      s.request('GET', '/usage', { token: tenant.token }),
    ]);
    for (const r of [datasets, audit, usage]) assert.equal(r.status, 200, r.text);
    const events = (await s.server.events.store.query(tenant, { filter: matchAll, limit: 10_000 })).events.length;
    return {
      datasets: (datasets.body.datasets as Array<{ name: string }>).map((d) => d.name).sort(),
      audit: (audit.body.entries as Array<{ id: string; action: string }>).map(({ id, action }) => ({ id, action })),
      usage: usage.body,
      events,
    };
  };

  /** Sends, checks the status, and that nothing changed. */
  async function leavesNothing<R extends Answer>(what: string, status: number, send: () => Promise<R>): Promise<R> {
    const before = await trace();
    const r = await send();
    assert.equal(r.status, status, `${what}: ${r.text}`);
    assert.deepEqual(await trace(), before, `${what} left something behind`);
    return r;
  }

  // The routes, each with a body as text or bytes and a Content-Type.
  const native = (name: string, body: string | Buffer, type: string, token: string | null = a.token, headers: Record<string, string> = {}) =>
    s.request('POST', `/datasets/${name}/ingest`, { body: Buffer.from(body), headers: { 'content-type': type, ...headers }, token });
  const loki = (body: string | Buffer, type: string, token: string | null = a.token) =>
    s.request('POST', '/loki/api/v1/push', { body: Buffer.from(body), headers: { 'content-type': type }, token });
  const bulk = (body: string | Buffer, token: string | null = a.token) =>
    s.request('POST', '/elastic/_bulk', { body: Buffer.from(body), headers: { 'content-type': 'application/x-ndjson' }, token });
  const otlp = async (body: object | Buffer, dataset: string | undefined, options: { token?: string | null; contentType?: string } = {}): Promise<Answer & { partial?: { rejected: number } }> => {
    const r = await postLogs(s.baseUrl, options.token === undefined ? a.token : options.token, body, {
      contentType: options.contentType,
      headers: dataset ? { 'x-ops-dataset': dataset } : {},
    });
    const partial = r.json ? r.json.partialSuccess && { rejected: Number(r.json.partialSuccess.rejectedLogRecords) } : r.status === 200 ? decodeResponse(r.bytes) : undefined;
    return { status: r.status, text: r.json ? JSON.stringify(r.json) : r.bytes.toString('latin1'), partial };
  };

  test('native ingest, NDJSON and JSON: 400 not JSON or no events, 413 too many events or too large, 415, 401', async () => {
    const nd = 'application/x-ndjson';
    const json = 'application/json';
    await leavesNothing('NDJSON not JSON', 400, () => native('ghost1', 'not json at all', nd));
    await leavesNothing('NDJSON blank lines', 400, () => native('ghost2', '\n \n\n', nd));
    await leavesNothing('NDJSON of 10,001 events', 413, () => native('ghost3', ndjson(...many(10_001)), nd));
    await leavesNothing('JSON not JSON', 400, () => native('ghost4', 'not json at all', json));
    await leavesNothing('JSON empty array', 400, () => native('ghost5', '[]', json));
    await leavesNothing('JSON a number', 400, () => native('ghost6', '42', json));
    await leavesNothing('JSON array of 10,001 events', 413, () => native('ghost7', JSON.stringify(many(10_001)), json));
    await leavesNothing('a body over 10 MB', 413, () => native('ghost8', Buffer.alloc(10_000_001, ' '), nd));
    await leavesNothing('gzip over 10 MB inflated', 413, () => native('ghost9', zlib.gzipSync(Buffer.alloc(10_000_001, ' ')), nd, a.token, { 'content-encoding': 'gzip' }));
    await leavesNothing('text/plain', 415, () => native('ghost10', ndjson({ event: 'x' }), 'text/plain'));
    await leavesNothing('no token', 401, () => native('ghost11', ndjson({ event: 'x' }), nd, null));
    await leavesNothing('a wrong token', 401, () => native('ghost12', ndjson({ event: 'x' }), nd, 'ops_live_00000000000000000000000000000000000000000'));
  });

  test('native ingest whose every event fails alone: 200 with the failures, and no dataset', async () => {
    const nd = await leavesNothing('NDJSON, every event bad', 200, () => native('ghost20', ndjson({ severity: 'loud' }, '{broken', [1]), 'application/x-ndjson'));
    assert.deepEqual(JSON.parse(nd.text).ingested, 0);
    assert.deepEqual(JSON.parse(nd.text).failed, 3);
    const json = await leavesNothing('JSON, every event bad', 200, () => native('ghost21', JSON.stringify([1, { payload: 'no' }, { event: hugeLine }]), 'application/json'));
    assert.deepEqual([JSON.parse(json.text).ingested, JSON.parse(json.text).failed], [0, 3]);
  });

  test('Loki push, JSON and protobuf: 400 bad bodies, 413 more than 10,000 lines, 415, 401; every line refused alone stores nothing', async () => {
    await leavesNothing('JSON not JSON', 400, () => loki('not json at all', 'application/json'));
    await leavesNothing('JSON of 10,001 lines', 413, () => loki(lokiJson('lk1', Array.from({ length: 10_001 }, (_, i) => `l${i}`)), 'application/json'));
    await leavesNothing('not snappy', 400, () => loki(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), 'application/x-protobuf'));
    await leavesNothing('bad labels', 400, () => loki(lokiProtobuf('{dataset=unquoted}', ['x']), 'application/x-protobuf'));
    await leavesNothing('protobuf of 10,001 lines', 413, () => loki(lokiProtobuf('{dataset="lk2"}', Array.from({ length: 10_001 }, (_, i) => `l${i}`)), 'application/x-protobuf'));
    await leavesNothing('text/csv', 415, () => loki(lokiJson('lk3', ['x']), 'text/csv'));
    await leavesNothing('no token', 401, () => loki(lokiJson('lk4', ['x']), 'application/json', null));
    const alone = await leavesNothing('JSON, every line past 256 KB', 400, () => loki(lokiJson('lk5', [hugeLine, hugeLine]), 'application/json'));
    assert.match(alone.text, /2 of 2 log lines were rejected/);
    await leavesNothing('protobuf, every line past 256 KB', 400, () => loki(lokiProtobuf('{dataset="lk6"}', [hugeLine]), 'application/x-protobuf'));
  });

  test('Elasticsearch bulk: 400 empty, 413 more than 10,000 actions or too large, 401; every item refused alone stores nothing', async () => {
    await leavesNothing('an empty body', 400, () => bulk('\n\n'));
    await leavesNothing('10,001 actions', 413, () => bulk(ndjson(...Array.from({ length: 10_001 }, () => [{ index: { _index: 'es1' } }, { m: 1 }]).flat())));
    await leavesNothing('a body over 10 MB', 413, () => bulk(Buffer.alloc(10_000_001, ' ')));
    await leavesNothing('no token', 401, () => bulk(ndjson({ index: { _index: 'es2' } }, { m: 1 }), null));
    const alone = await leavesNothing('every document bad', 200, () =>
      bulk(ndjson({ index: { _index: 'es3' } }, { message: 'x', ts: 'yesterday' }, { create: { _index: 'es3' } }, '{"message": "broken')),
    );
    assert.equal(JSON.parse(alone.text).errors, true);
  });

  test('OTLP logs, JSON and protobuf: 400 bad data, 413 more than 10,000 records, 415, 401; every record rejected alone stores nothing', async () => {
    const tooMany = logsRequest({ records: Array.from({ length: 10_001 }, () => ({ body: { stringValue: 'x' } })) });
    await leavesNothing('JSON not JSON', 400, () => otlp(Buffer.from('not json at all'), 'ot1', { contentType: 'application/json' }));
    await leavesNothing('protobuf not protobuf', 400, () => otlp(Buffer.from([0x0f, 0xff, 0xff]), 'ot2'));
    await leavesNothing('JSON of 10,001 records', 413, () => otlp(tooMany, 'ot3'));
    await leavesNothing('protobuf of 10,001 records', 413, () => otlp(toProtobuf(tooMany), 'ot4'));
    await leavesNothing('text/plain', 415, () => otlp(Buffer.from('x'), 'ot5', { contentType: 'text/plain' }));
    await leavesNothing('no token', 401, () => otlp(logsRequest({ records: [{ body: { stringValue: 'x' } }] }), 'ot6', { token: null }));
    const bad = logsRequest({ resource: { 'service.name': 'ot7' }, records: [{ severityNumber: 99 }, { severityText: 'loud', body: { stringValue: 'x' } }] });
    const json = await leavesNothing('JSON, every record rejected', 200, () => otlp(bad, undefined));
    assert.deepEqual(json.partial, { rejected: 2 });
    const proto = await leavesNothing('protobuf, every record rejected', 200, () => otlp(toProtobuf(bad), undefined));
    assert.equal(proto.partial?.rejected, 2);
  });

  test('402 events_month on every route leaves no dataset, audit entry or usage', async () => {
    const { quotas } = s.server.ctx;
    const used = (await quotas.usage(a.orgId, 'free')).find((q) => q.metric === 'events_month')!.used;
    const rest = 1_000_000 - used;
    await quotas.consume(a.orgId, 'free', 'events_month', rest);
    try {
      const one = [{ body: { stringValue: 'x' } }];
      await leavesNothing('native NDJSON', 402, () => native('q1', ndjson({ event: 'x' }), 'application/x-ndjson'));
      await leavesNothing('native JSON', 402, () => native('q2', JSON.stringify([{ event: 'x' }, { event: 'y' }]), 'application/json'));
      await leavesNothing('native to default', 402, () => native('default', ndjson({ event: 'x' }), 'application/x-ndjson'));
      await leavesNothing('Loki JSON', 402, () => loki(lokiJson('q3', ['x']), 'application/json'));
      await leavesNothing('Loki protobuf', 402, () => loki(lokiProtobuf('{dataset="q4"}', ['x']), 'application/x-protobuf'));
      await leavesNothing('Elasticsearch bulk', 402, () => bulk(ndjson({ index: { _index: 'q5' } }, { m: 1 }, { index: { _index: 'q6' } }, { m: 2 })));
      await leavesNothing('OTLP JSON', 402, () => otlp(logsRequest({ records: one }), 'q7'));
      await leavesNothing('OTLP protobuf, two resources', 402, () =>
        otlp(toProtobuf(logsRequest({ resource: { 'service.name': 'q8' }, records: one }, { resource: { 'service.name': 'q9' }, records: one })), undefined),
      );
      const entry = await leavesNothing('a log entry', 402, () => s.request('POST', '/logs', { json: { level: 'info', message: 'x' } }));
      assert.match(entry.text, /quota_exceeded/);
    } finally {
      await quotas.release(a.orgId, 'events_month', rest);
    }
  });

  test("the free plan's cap is not taken by refused requests: 3 refused to new names, then 3 stored to new names get their own datasets", async () => {
    const start = await trace();
    assert.deepEqual(start.datasets, [], 'no refusal so far left a dataset');
    await leavesNothing('bad NDJSON', 400, () => native('first', 'not json at all', 'application/x-ndjson'));
    await leavesNothing('Loki, too many lines', 413, () => loki(lokiJson('second', Array.from({ length: 10_001 }, (_, i) => `l${i}`)), 'application/json'));
    await leavesNothing('OTLP, not JSON', 400, () => otlp(Buffer.from('{'), 'third', { contentType: 'application/json' }));
    assert.equal((await native('first', ndjson({ event: 'one' }), 'application/x-ndjson')).status, 200);
    assert.equal((await loki(lokiJson('second', ['two']), 'application/json')).status, 204);
    assert.equal((await otlp(logsRequest({ records: [{ body: { stringValue: 'three' } }] }), 'third')).status, 200);
    const after = await trace();
    assert.deepEqual(after.datasets, ['first', 'second', 'third'], 'each has its own dataset; none overflowed into default');
    const created = after.audit.filter((e) => e.action === 'dataset.create');
    assert.equal(created.length, 3);
    const events = (await s.server.events.store.query(a, { filter: matchAll, limit: 10 })).events;
    assert.deepEqual(events.map((e) => e.dataset).sort(), ['first', 'second', 'third']);
    assert.ok(events.every((e) => !('_dataset' in JSON.parse(e.payloadJson))));
    // The cap still holds: a fourth new name overflows into default, created then.
    assert.equal((await native('fourth', ndjson({ event: 'four' }), 'application/x-ndjson')).status, 200);
    assert.deepEqual((await trace()).datasets, ['default', 'first', 'second', 'third']);
    const four = (await s.server.events.store.query(a, { filter: matchAll, limit: 10 })).events.find((e) => e.event === 'four')!;
    assert.deepEqual([four.dataset, JSON.parse(four.payloadJson)._dataset], ['default', 'fourth']);
  });
});

describe('first writes into a new dataset at the same time', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ plan: 'free' });
  });
  after(() => s.close());

  const datasetCreations = async (tenant: TestTenant) => {
    const r = await s.request('GET', `/orgs/${tenant.orgId}/audit?action=dataset.create&limit=100`, { token: tenant.token });
    assert.equal(r.status, 200, r.text);
    return (r.body.entries as Array<{ target: { id: string }; details: { name: string } }>).map((e) => ({ id: e.target.id, name: e.details.name }));
  };
  const names = async (tenant: TestTenant) => ((await s.request('GET', '/datasets', { token: tenant.token })).body.datasets as Array<{ name: string; id: string }>).map((d) => d.name).sort();
  const eventsUsed = async (tenant: TestTenant) =>
    ((await s.request('GET', '/usage', { token: tenant.token })).body.quotas as Array<{ metric: string; used: number }>).find((q) => q.metric === 'events_month')!.used;

  test('concurrent first ingests into one new name, over every route, create it once with one audit entry; every event lands in it', async () => {
    const a = s.tenants.a;
    const before = await eventsUsed(a);
    const sends = [
      ...Array.from({ length: 4 }, (_, i) => s.request('POST', '/datasets/together/ingest', { body: Buffer.from(ndjson({ event: `nd${i}` }, { event: `nd${i}b` })), headers: { 'content-type': 'application/x-ndjson' } })),
      ...Array.from({ length: 3 }, (_, i) => s.request('POST', '/datasets/together/ingest', { json: [{ event: `js${i}` }] })),
      ...Array.from({ length: 3 }, (_, i) => s.request('POST', '/loki/api/v1/push', { body: Buffer.from(lokiJson('together', [`lk${i}`])), headers: { 'content-type': 'application/json' } })),
      ...Array.from({ length: 3 }, (_, i) =>
        s.request('POST', '/elastic/_bulk', { body: Buffer.from(ndjson({ index: { _index: 'together' } }, { message: `es${i}` })), headers: { 'content-type': 'application/x-ndjson' } }),
      ),
      ...Array.from({ length: 3 }, (_, i) => postLogs(s.baseUrl, a.token, logsRequest({ records: [{ body: { stringValue: `ot${i}` } }] }), { headers: { 'x-ops-dataset': 'together' } })),
    ];
    const answers = await Promise.all(sends);
    assert.deepEqual(answers.map((r) => r.status), [...Array(7).fill(200), ...Array(3).fill(204), ...Array(6).fill(200)]);
    const total = 4 * 2 + 3 + 3 + 3 + 3;
    assert.deepEqual(await names(a), ['together']);
    const creations = await datasetCreations(a);
    assert.equal(creations.length, 1, JSON.stringify(creations));
    const events = (await s.server.events.store.query(a, { filter: matchAll, limit: 100 })).events;
    assert.equal(events.length, total);
    assert.ok(events.every((e) => e.dataset === 'together'));
    assert.equal(await eventsUsed(a), before + total, 'each event is charged once');
  });

  test('concurrent first ingests into more new names than the cap has room for: as many are created as fit, the others overflow into default, created once', async () => {
    // Organisation B (free: 3 datasets) has one already; 2 slots for 5 new names.
    const b = s.tenants.b;
    assert.equal((await s.request('POST', '/datasets/held/ingest', { json: [{ event: 'held' }], token: b.token })).status, 200);
    const wanted = ['race1', 'race2', 'race3', 'race4', 'race5'];
    const answers = await Promise.all(wanted.map((name) => s.request('POST', `/datasets/${name}/ingest`, { json: [{ event: name }, { event: name }], token: b.token })));
    assert.deepEqual(answers.map((r) => [r.status, r.body.ingested]), wanted.map(() => [200, 2]));
    const listed = await names(b);
    const created = wanted.filter((name) => listed.includes(name));
    assert.equal(created.length, 2, `two new names fit: ${listed.join(', ')}`);
    assert.deepEqual(listed, ['default', 'held', ...created].sort());
    const creations = await datasetCreations(b);
    assert.deepEqual(creations.map((c) => c.name).sort(), ['default', 'held', ...created].sort(), 'one dataset.create each, default once');
    const events = (await s.server.events.store.query(b, { filter: matchAll, limit: 100 })).events;
    for (const name of wanted) {
      const mine = events.filter((e) => e.event === name);
      assert.equal(mine.length, 2, name);
      if (created.includes(name)) assert.ok(mine.every((e) => e.dataset === name && !('_dataset' in JSON.parse(e.payloadJson))), name);
      else assert.ok(mine.every((e) => e.dataset === 'default' && JSON.parse(e.payloadJson)._dataset === name), name);
    }
  });

  test('a target that moved between its resolution and the first write is settled in the transaction: another creation of the name is used, a cap filled meanwhile overflows', async () => {
    // The window between a request's resolution and its write is too short to hit over HTTP on
    // purpose: the service is driven through it, another request creating or filling in between.
    const a = s.tenants.a;
    const { datasets } = s.server.events;
    const resolve = async (name: string) => {
      const planned = new Map([[name, await datasets.resolveTarget(a, 'free', name)]]);
      return { planned, target: planned.get(name) as IngestTarget };
    };

    const raced = await resolve('raced');
    assert.equal(raced.target.pending, true);
    const made = await s.request('POST', '/datasets', { json: { name: 'raced', default_severity: 'warn' } });
    assert.equal(made.status, 201, made.text);
    const creations = (await datasetCreations(a)).length;
    const settledRaced = await datasets.createWith(a, 'free', raced.planned, new Set(['raced']), async (_trx, settled) => {
      const target = settled.get('raced') as IngestTarget;
      return { value: target, datasetIds: new Set([target.dataset.id]) };
    });
    assert.deepEqual([settledRaced.dataset.id, settledRaced.dataset.default_severity, settledRaced.pending, settledRaced.overflowFrom], [(await datasets.find(a, 'raced'))!.id, 'warn', false, undefined]);
    assert.equal((await datasetCreations(a)).length, creations, 'the name was created once, by POST /datasets');

    // Organisation A has together and raced: one slot, resolved for late, then taken by filler.
    const late = await resolve('late');
    assert.deepEqual([late.target.pending, late.target.overflowFrom], [true, undefined]);
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'filler' } })).status, 201);
    const settledLate = await datasets.createWith(a, 'free', late.planned, new Set(['late']), async (_trx, settled) => {
      const target = settled.get('late') as IngestTarget;
      return { value: target, datasetIds: new Set([target.dataset.id]) };
    });
    assert.deepEqual([settledLate.dataset.name, settledLate.overflowFrom], ['default', 'late']);
    assert.deepEqual(await names(a), ['default', 'filler', 'raced', 'together']);
    assert.deepEqual((await datasetCreations(a)).slice(0, 2).map((c) => c.name), ['default', 'filler']);
  });
});
