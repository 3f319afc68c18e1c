import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer, type TestTenant } from '../../test-support/test-server.js';
import { matchAll } from '../../engine/event-store.js';
import { severities } from '../../shared/event-record.js';
import { anyValueOf, attributes, decodeResponse, logsRequest, postLogs, toProtobuf, type ResourceSpec } from '../../test-support/ingest/otlp-test-requests.js';

const at = Date.parse('2026-11-21T17:19:00.123Z');
const ns = (ms: number) => (BigInt(ms) * 1_000_000n + 456_789n).toString();

/** DECISIONS §15, rule by rule, through both encodings; what is stored is read from the event store. */
describe('OTLP log record → event (DECISIONS §15)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  const stored = async (dataset: string, tenant: TestTenant = s.tenants.a) =>
    (await s.server.events.store.query(tenant, { filter: matchAll, limit: 1000 })).events
      .filter((e) => e.dataset === dataset)
      .map((e) => ({ ...e, payload: JSON.parse(e.payloadJson) as Record<string, unknown> }));

  /** Sends the specs as OTLP/JSON and as protobuf, to datasets `<dataset>-json` and `<dataset>-proto`. */
  const sendBoth = async (dataset: string, ...specs: ResourceSpec[]) => {
    for (const form of ['json', 'proto'] as const) {
      const request = logsRequest(...specs);
      const headers = { 'x-ops-dataset': `${dataset}-${form}` };
      const r = await postLogs(s.baseUrl, s.tenants.a.token, form === 'json' ? request : toProtobuf(request), { headers });
      assert.equal(r.status, 200, r.bytes.toString());
      if (form === 'json') assert.deepEqual(r.json, {});
      else assert.equal(decodeResponse(r.bytes), undefined);
    }
  };

  test('dataset: X-Ops-Dataset, else resource service.name, else otel (also for unknown_service); one request may fill several', async () => {
    const request = logsRequest(
      { resource: { 'service.name': 'checkout' }, records: [{ body: { stringValue: 'a' } }] },
      { resource: { 'host.name': 'h' }, records: [{ body: { stringValue: 'b' } }] },
      { resource: { 'service.name': 'checkout' }, records: [{ body: { stringValue: 'c' } }] },
      { resource: { 'service.name': 'unknown_service:node' }, records: [{ body: { stringValue: 'sdk default' } }] },
    );
    assert.equal((await postLogs(s.baseUrl, s.tenants.a.token, request)).status, 200);
    assert.deepEqual((await stored('checkout')).map((e) => e.message).sort(), ['a', 'c']);
    // the SDKs' placeholder when the application names no service counts as none
    assert.deepEqual((await stored('otel')).map((e) => e.message).sort(), ['b', 'sdk default']);
    const r = await postLogs(s.baseUrl, s.tenants.a.token, toProtobuf(request), { headers: { 'x-ops-dataset': 'header-wins' } });
    assert.equal(r.status, 200);
    assert.deepEqual((await stored('header-wins')).map((e) => e.message).sort(), ['a', 'b', 'c', 'sdk default']);
  });

  test('ts: time_unix_nano, else observed_time_unix_nano, else now (milliseconds, floored)', async () => {
    const before = s.server.ctx.clock.now();
    await sendBoth('times', {
      records: [
        { timeUnixNano: ns(at), observedTimeUnixNano: ns(at + 5000), body: { stringValue: 'time' } },
        { observedTimeUnixNano: Number(ns(at + 7)), body: { stringValue: 'observed' } },
        { timeUnixNano: '0', body: { stringValue: 'now' } },
      ],
    });
    for (const form of ['json', 'proto']) {
      const events = await stored(`times-${form}`);
      const ts = (m: string) => events.find((e) => e.message === m)!.ts;
      assert.equal(ts('time'), at);
      assert.equal(ts('observed'), at + 7);
      assert.ok(ts('now') >= before && ts('now') <= s.server.ctx.clock.now());
    }
  });

  test('severity: severity_number (1–4 trace → debug … 21–24 fatal), else severity_text with the aliases, else the dataset default', async () => {
    const numbers: Array<[number, string]> = [[1, 'debug'], [4, 'debug'], [5, 'debug'], [8, 'debug'], [9, 'info'], [12, 'info'], [13, 'warn'], [16, 'warn'], [17, 'error'], [20, 'error'], [21, 'fatal'], [24, 'fatal']];
    const texts: Array<[string, string]> = [['TRACE', 'debug'], ['Information', 'info'], ['warning', 'warn'], ['ERR', 'error'], ['crit', 'fatal'], ['panic', 'fatal'], ['WARN3', 'warn']];
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'sev-json', default_severity: 'error' } })).status, 201);
    assert.equal((await s.request('POST', '/datasets', { json: { name: 'sev-proto', default_severity: 'error' } })).status, 201);
    await sendBoth('sev', {
      records: [
        ...numbers.map(([n], i) => ({ severityNumber: n, severityText: 'ignored when the number is set', body: { stringValue: `n${i}` } })),
        ...texts.map(([t], i) => ({ severityText: t, body: { stringValue: `t${i}` } })),
        { body: { stringValue: 'default' } },
      ],
    });
    for (const form of ['json', 'proto']) {
      const events = await stored(`sev-${form}`);
      const severity = (m: string) => severities[events.find((e) => e.message === m)!.severity];
      numbers.forEach(([, expected], i) => assert.equal(severity(`n${i}`), expected, `number ${numbers[i]![0]}`));
      texts.forEach(([, expected], i) => assert.equal(severity(`t${i}`), expected, texts[i]![0]));
      assert.equal(severity('default'), 'error');
    }
  });

  test('message ← a string body; any other body → payload.body. event ← event.name (else event_name), actor ← enduser.id, source ← service.instance.id, else host.name, else service.name', async () => {
    await sendBoth(
      'fields',
      {
        resource: { 'service.name': 'svc', 'host.name': 'host-1', 'service.instance.id': 'inst-1' },
        records: [
          { body: { stringValue: 'plain' }, attributes: attributes({ 'event.name': 'match.start', 'enduser.id': 'alice' }), eventName: 'loses' },
          { body: anyValueOf({ map: 'dust', players: [1, 2] }), eventName: 'from.field' },
          { body: anyValueOf(42), attributes: attributes({ 'enduser.id': 7 }) },
        ],
      },
      { resource: { 'service.name': 'svc', 'host.name': 'host-2' }, records: [{ body: { stringValue: 'host' } }] },
      { resource: { 'service.name': 'svc' }, records: [{ body: { stringValue: 'service' } }] },
    );
    for (const form of ['json', 'proto']) {
      const events = await stored(`fields-${form}`);
      const plain = events.find((e) => e.message === 'plain')!;
      assert.deepEqual([plain.event, plain.actor, plain.source], ['match.start', 'alice', 'inst-1']);
      assert.equal(plain.payload.body, undefined);
      const structured = events.find((e) => e.event === 'from.field')!;
      assert.equal(structured.message, '');
      assert.deepEqual(structured.payload.body, { map: 'dust', players: [1, 2] });
      assert.equal(structured.actor, null);
      const numeric = events.find((e) => e.payload.body === 42)!;
      assert.deepEqual([numeric.message, numeric.event, numeric.actor], ['', '', '7']);
      assert.equal(events.find((e) => e.message === 'host')!.source, 'host-2');
      assert.equal(events.find((e) => e.message === 'service')!.source, 'svc');
    }
  });

  test('payload: the attributes with their keys as sent, resource, scope, trace_id, span_id (lower-case hex) and flags', async () => {
    const traceId = '5B8EFFF798038103D269B633813FC60C';
    const spanId = 'EEE19B7EC3C1B174';
    await sendBoth('payload', {
      resource: { 'service.name': 'svc', 'deployment.environment': 'prod' },
      scope: { name: 'game-server', version: '1.2.3' },
      records: [
        {
          body: { stringValue: 'traced' },
          attributes: attributes({ 'http.method': 'GET', 'http.status_code': 200, nested: { a: { b: true } } }),
          traceId,
          spanId,
          flags: 1,
        },
        { body: { stringValue: 'bare' }, traceId: '', spanId: '0000000000000000' },
      ],
    });
    for (const form of ['json', 'proto']) {
      const events = await stored(`payload-${form}`);
      assert.deepEqual(events.find((e) => e.message === 'traced')!.payload, {
        'http.method': 'GET',
        'http.status_code': 200,
        nested: { a: { b: true } },
        resource: { 'service.name': 'svc', 'deployment.environment': 'prod' },
        scope: { name: 'game-server', version: '1.2.3' },
        trace_id: traceId.toLowerCase(),
        span_id: spanId.toLowerCase(),
        flags: 1,
      });
      assert.deepEqual(Object.keys(events.find((e) => e.message === 'bare')!.payload), ['resource', 'scope']);
    }
    // SOQL reaches a dotted attribute key with backquotes.
    const r = await s.request('POST', '/query', { json: { q: 'dataset:payload-proto AND payload.`http.method`:GET AND payload.`http.status_code` >= 200' } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.events.map((e: { message: string }) => e.message), ['traced']);
  });

  test('AnyValue: string, bool, int (exact decimal string past 2^53), double (NaN by name), array, kvlist, bytes (base64), empty (null)', async () => {
    const values = {
      s: { stringValue: 'text' },
      b: { boolValue: false },
      i: { intValue: '-42' },
      big: { intValue: '9223372036854775807' },
      safe: { intValue: String(Number.MAX_SAFE_INTEGER) },
      d: { doubleValue: 2.5 },
      nan: { doubleValue: 'NaN' },
      inf: { doubleValue: '-Infinity' },
      arr: { arrayValue: { values: [{ stringValue: 'x' }, { intValue: 1 }, {}] } },
      kv: { kvlistValue: { values: [{ key: 'k', value: { boolValue: true } }, { key: 'k', value: { stringValue: 'last wins' } }] } },
      bytes: { bytesValue: Buffer.from([0, 1, 254, 255]).toString('base64') },
      empty: {},
    };
    await sendBoth('values', { records: [{ body: { stringValue: 'v' }, attributes: Object.entries(values).map(([key, value]) => ({ key, value })) }] });
    for (const form of ['json', 'proto']) {
      const [event] = await stored(`values-${form}`);
      const { resource: _resource, ...payload } = event!.payload;
      assert.deepEqual(payload, {
        s: 'text',
        b: false,
        i: -42,
        big: '9223372036854775807',
        safe: Number.MAX_SAFE_INTEGER,
        d: 2.5,
        nan: 'NaN',
        inf: '-Infinity',
        arr: ['x', 1, null],
        kv: { k: 'last wins' },
        bytes: 'AAH+/w==',
        empty: null,
      });
    }
  });

  test('records are not de-duplicated: the same request twice stores its records twice', async () => {
    const request = logsRequest({ records: [{ timeUnixNano: ns(at), body: { stringValue: 'again' } }] });
    for (let i = 0; i < 2; i++) assert.equal((await postLogs(s.baseUrl, s.tenants.a.token, request, { headers: { 'x-ops-dataset': 'twice' } })).status, 200);
    const events = await stored('twice');
    assert.equal(events.length, 2);
    assert.notEqual(events[0]!.event_id, events[1]!.event_id);
  });

  test('the dataset cap as native ingest: past it, records go to `default` with payload._dataset; an archived or misnamed dataset refuses its records', async () => {
    const b = s.tenants.b; // free plan: 3 datasets
    const request = logsRequest(...['one', 'two', 'three', 'four'].map((name) => ({ resource: { 'service.name': name }, records: [{ body: { stringValue: name } }] })));
    const r = await postLogs(s.baseUrl, b.token, request);
    assert.deepEqual([r.status, r.json], [200, {}]);
    const overflow = await stored('default', b);
    assert.deepEqual(overflow.map((e) => [e.message, e.payload._dataset]), [['four', 'four']]);

    assert.equal((await s.request('DELETE', '/datasets/one', { token: b.token })).status, 200);
    const mixed = logsRequest(
      { resource: { 'service.name': 'one' }, records: [{ body: { stringValue: 'to archived' } }] },
      { resource: { 'service.name': 'Not A Name' }, records: [{ body: { stringValue: 'misnamed' } }] },
      { resource: { 'service.name': 'two' }, records: [{ body: { stringValue: 'kept' } }] },
    );
    const partial = await postLogs(s.baseUrl, b.token, toProtobuf(mixed));
    assert.equal(partial.status, 200);
    const answer = decodeResponse(partial.bytes)!;
    assert.equal(answer.rejected, 2);
    assert.match(answer.errorMessage, /resourceLogs\[0\]\.scopeLogs\[0\]\.logRecords\[0\]: dataset "one" is archived/);
    assert.match(answer.errorMessage, /resourceLogs\[1\].*service\.name "Not A Name" is not a dataset name/);
    assert.deepEqual((await stored('two', b)).map((e) => e.message).sort(), ['kept', 'two']);
    // Named by the header, an archived dataset refuses the request, as native ingest does.
    const refused = await postLogs(s.baseUrl, b.token, mixed, { headers: { 'x-ops-dataset': 'one' } });
    assert.deepEqual([refused.status, refused.json.error.code], [409, 'conflict']);
    const badHeader = await postLogs(s.baseUrl, b.token, mixed, { headers: { 'x-ops-dataset': 'Bad_Name' } });
    assert.deepEqual([badHeader.status, badHeader.json.error.code], [400, 'bad_request']);
  });
});
