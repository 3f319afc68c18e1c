import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { LoggerProvider, BatchLogRecordProcessor, type LogRecordExporter, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { OTLPLogExporter as JsonExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { startTestServer, type TestServer } from '../../test-support/test-server.js';
import { TailClient } from '../../test-support/tail/test-client.js';

interface Exported {
  code: number;
  error?: Error;
}

/**
 * An exporter configured as an application would be: only by the environment. Every export's
 * result is kept, so the test sees the exporter's own verdict on our answers.
 */
function fromEnvironment(env: Record<string, string>, make: () => LogRecordExporter): { exporter: LogRecordExporter; results: Exported[] } {
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  Object.assign(process.env, env);
  let exporter: LogRecordExporter;
  try {
    exporter = make();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
  const results: Exported[] = [];
  const original = exporter.export.bind(exporter);
  exporter.export = (logs: ReadableLogRecord[], done: (result: Exported) => void) =>
    original(logs, (result) => {
      results.push(result);
      done(result);
    });
  return { exporter, results };
}

describe('the OpenTelemetry JS SDK exports logs to POST /v1/otlp/v1/logs', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_TAIL_HEARTBEAT_MS: '60000', OPS_TAIL_IDLE_TIMEOUT_MS: '60000', OPS_TAIL_POLL_MS: '200' } });
  });
  after(() => s.close());

  test('OTEL_EXPORTER_OTLP_ENDPOINT={base_url}/otlp: JSON and gzip protobuf exporters; found by SOQL and seen on live tail', async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: `${s.baseUrl}/otlp`, OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer ${s.tenants.a.token}` };
    const json = fromEnvironment(env, () => new JsonExporter());
    const proto = fromEnvironment({ ...env, OTEL_EXPORTER_OTLP_LOGS_COMPRESSION: 'gzip' }, () => new ProtoExporter());
    const resources = [
      { 'service.name': 'sdk-json', 'service.instance.id': 'json-1', 'host.name': 'host-a' },
      { 'service.name': 'sdk-proto', 'host.name': 'host-b' },
    ];
    const providers = [json, proto].map(
      ({ exporter }, i) => new LoggerProvider({ resource: resourceFromAttributes(resources[i]!), processors: [new BatchLogRecordProcessor({ exporter })] }),
    );

    const tail = await TailClient.open(s.baseUrl, s.tenants.a.token, 'actor:sdk-tester');
    assert.equal(tail.status, 200, JSON.stringify('body' in tail ? tail.body : ''));
    const client = (tail as { client: TailClient }).client;

    const traceId = '5b8efff798038103d269b633813fc60c';
    const spanId = 'eee19b7ec3c1b174';
    const inSpan = trace.setSpanContext(context.active(), { traceId, spanId, traceFlags: TraceFlags.SAMPLED });
    const at = Date.parse('2026-11-21T17:19:00.123Z');
    for (const [i, provider] of providers.entries()) {
      const logger = provider.getLogger('game-server', '1.2.3');
      logger.emit({
        timestamp: at + i,
        severityNumber: SeverityNumber.WARN,
        severityText: 'WARN',
        body: 'player kicked',
        attributes: { 'enduser.id': 'sdk-tester', 'event.name': 'player.kick', 'http.method': 'GET', ping: 180, 'match.ranked': true },
        context: inSpan,
      });
      logger.emit({ severityNumber: SeverityNumber.ERROR, body: { reason: 'timeout', tries: [1, 2] }, attributes: { 'enduser.id': 'sdk-tester' } });
    }
    await Promise.all(providers.map((p) => p.forceFlush()));
    for (const { results } of [json, proto]) {
      assert.deepEqual(results.map((r) => [r.code, r.error?.message]), [[0, undefined]], 'the export (one batch of two records) succeeded');
    }

    const r = await s.request('POST', '/query', { json: { q: 'actor:sdk-tester AND payload.`http.method`:GET' } });
    assert.equal(r.status, 200, r.text);
    const events = (r.body.events as Array<Record<string, unknown>>).sort((a, b) => String(a.dataset).localeCompare(String(b.dataset)));
    assert.deepEqual(events.map((e) => [e.dataset, e.source]), [['sdk-json', 'json-1'], ['sdk-proto', 'host-b']]);
    for (const [i, e] of events.entries()) {
      assert.equal(e.ts, new Date(at + i).toISOString());
      assert.equal(e.severity, 'warn');
      assert.equal(e.event, 'player.kick');
      assert.equal(e.actor, 'sdk-tester');
      assert.equal(e.message, 'player kicked');
      const payload = e.payload as Record<string, unknown>;
      assert.equal(payload['http.method'], 'GET');
      assert.equal(payload.ping, 180);
      assert.equal(payload['match.ranked'], true);
      assert.deepEqual(payload.scope, { name: 'game-server', version: '1.2.3' });
      assert.equal(payload.trace_id, traceId);
      assert.equal(payload.span_id, spanId);
      assert.equal(payload.flags, 1);
      assert.deepEqual(payload.resource, resources[i]);
    }
    const structured = await s.request('POST', '/query', { json: { q: 'dataset:sdk-proto AND severity >= error' } });
    assert.equal(structured.body.events.length, 1, structured.text);
    assert.deepEqual(structured.body.events[0].payload.body, { reason: 'timeout', tries: [1, 2] });
    assert.equal(structured.body.events[0].message, '');

    await client.until((c) => c.events.length >= 4, 5_000, 'the four records on the tail');
    assert.deepEqual(client.events.map((e) => e.data.dataset as string).sort(), ['sdk-json', 'sdk-json', 'sdk-proto', 'sdk-proto']);
    await client.close();
    await Promise.all(providers.map((p) => p.shutdown()));
  });

  test('the exporters take a partial success as a success, and a refused token as a failure', async () => {
    const endpoint = `${s.baseUrl}/otlp`;
    for (const make of [() => new JsonExporter(), () => new ProtoExporter()]) {
      const ok = fromEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer ${s.tenants.a.token}` }, make);
      const refused = fromEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer ops_live_wrong' }, make);
      const resource = resourceFromAttributes({ 'service.name': 'sdk-partial' });
      const providers = [ok, refused].map(({ exporter }) => new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter })] }));
      for (const provider of providers) {
        const logger = provider.getLogger('x');
        logger.emit({ body: 'kept', attributes: { 'enduser.id': 'partial' } });
        logger.emit({ body: 'x'.repeat(300_000), attributes: { 'enduser.id': 'partial' } });
      }
      await Promise.all(providers.map((p) => p.forceFlush()));
      assert.deepEqual(ok.results.map((r) => r.code), [0], 'the oversized record is rejected alone: a partial success, not an error');
      assert.deepEqual(refused.results.map((r) => r.code), [1]);
      assert.match(String(refused.results[0]!.error?.message), /401|Unauthorized/i);
      await Promise.all(providers.map((p) => p.shutdown()));
    }
    const r = await s.request('POST', '/query', { json: { q: 'dataset:sdk-partial' } });
    assert.deepEqual(r.body.events.map((e: { message: string }) => e.message), ['kept', 'kept']);
  });
});
