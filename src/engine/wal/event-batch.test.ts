import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { batchTextFields, BatchReader, checkBatch, decodeBatch, encodeBatch, frameAppend, unframeAppend } from './event-batch.js';
import type { NewEvent } from '../event-store.js';
import { eventColumnList } from '../event-columns.js';
import { newEventId } from '../../shared/ids.js';

/** What UTF-8 keeps of a string: lone surrogates become U+FFFD (String#toWellFormed, ES2024). */
const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8');

const eventArb: fc.Arbitrary<NewEvent> = fc.record({
  datasetId: fc.constantFrom('ds_01JDZQ4X0000000000000000AB', 'default', 'ds_x'),
  eventId: fc.oneof(fc.uuid().map((u) => u.toLowerCase()), fc.constant('').map(() => newEventId())),
  clientEventId: fc.boolean(),
  ts: fc.integer({ min: 0, max: 253_402_300_799_999 }),
  severity: fc.integer({ min: 0, max: 4 }),
  bytesRaw: fc.integer({ min: 0, max: 256_000 }),
  event: fc.string({ unit: 'binary', maxLength: 30 }),
  actor: fc.option(fc.string({ unit: 'binary', maxLength: 30 }), { nil: null }),
  source: fc.option(fc.string({ maxLength: 30 }), { nil: null }),
  message: fc.string({ unit: 'binary', maxLength: 60 }),
  payload: fc.json(),
});

test('property: a batch reads back field for field (text as UTF-8, lone surrogates as U+FFFD)', () => {
  fc.assert(
    fc.property(
      fc.record({ orgId: fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }), projectId: fc.string({ minLength: 1, maxLength: 30 }), mode: fc.constantFrom('live' as const, 'test' as const) }),
      fc.integer({ min: 0, max: 2 ** 47 }),
      fc.array(eventArb, { maxLength: 20 }),
      (tenant, ingestedAt, events) => {
        const reader = new BatchReader(encodeBatch(tenant, ingestedAt, events));
        assert.deepEqual(reader.tenant, { ...tenant, orgId: wellFormed(tenant.orgId), projectId: wellFormed(tenant.projectId) });
        assert.equal(reader.ingestedAt, ingestedAt);
        assert.equal(reader.count, events.length);
        for (const e of events) {
          assert.ok(reader.next());
          assert.deepEqual(
            [reader.datasetId, reader.eventId, reader.ts, reader.severity, reader.bytesRaw, ...batchTextFields.map((_, k) => reader.text(k))],
            [e.datasetId, e.eventId, e.ts, e.severity, e.bytesRaw, wellFormed(e.event), e.actor === null ? null : wellFormed(e.actor), e.source, wellFormed(e.message), e.payload],
          );
        }
        assert.equal(reader.next(), false);
      },
    ),
    { numRuns: 300 },
  );
});

const tenantArb = fc.record({ orgId: fc.stringMatching(/^[0-9A-Z]{26}$/), projectId: fc.stringMatching(/^[0-9A-Z]{26}$/), mode: fc.constantFrom('live' as const, 'test' as const) });

test('property: an append framed for the events node comes back whole: tenant, events, which carry client ids', () => {
  fc.assert(
    fc.property(tenantArb, fc.array(eventArb, { maxLength: 20 }), (tenant, events) => {
      const frame = frameAppend(tenant, 1_700_000_000_000, events);
      const { tenant: back, count, body, clientIds } = unframeAppend(frame);
      assert.deepEqual(back, { ...tenant });
      assert.equal(count, events.length);
      assert.deepEqual(clientIds ? events.map((_, i) => clientIds(i)) : events.map(() => false), events.map((e) => e.clientEventId));
      const decoded = decodeBatch(body).events;
      assert.deepEqual(decoded.map((e) => [e.eventId, e.ts, e.severity, e.payload]), events.map((e) => [e.eventId, e.ts, e.severity, wellFormed(e.payload)]));
    }),
  );
});

test('property: the events node refuses a cut or damaged batch with its own error, never a crash or a record the loader cannot read', () => {
  fc.assert(
    fc.property(tenantArb, fc.array(eventArb, { minLength: 1, maxLength: 8 }), fc.nat(), fc.nat(), fc.integer({ min: 0, max: 255 }), (tenant, events, cut, at, byte) => {
      const body = encodeBatch(tenant, 1_700_000_000_000, events);
      assert.throws(() => checkBatch(body.subarray(0, cut % body.length)), /malformed event batch/);
      const damaged = Buffer.from(body);
      damaged[at % body.length] = byte;
      let checked: { count: number } | undefined;
      try {
        checked = checkBatch(damaged);
      } catch (error) {
        assert.match((error as Error).message, /^malformed event batch/);
        return;
      }
      // What passes is readable to its end: every event, every text as UTF-8.
      const reader = new BatchReader(damaged);
      while (reader.next()) for (let k = 0; k < batchTextFields.length; k++) reader.text(k);
      assert.equal(reader.offset, damaged.length);
      assert.equal(checked.count, reader.count);
    }),
  );
  assert.throws(() => unframeAppend(Buffer.from([1, 0])), /too short/);
  assert.throws(() => unframeAppend(Buffer.from([255, 255, 0, 0, 1])), /flags run past the end/);
});

test("the log's record carries every column of the one description (event-columns.ts) the engine does not assign itself", () => {
  // Where each column of a stored event comes from: the record's header, each event's fixed
  // fields, its text fields, or the engine at load (seq: the log's numbering). A column added to
  // the description fails here until the record (and this table) say where it comes from.
  const fromHeader = ['tenant', 'ingested_at'];
  const perEvent = ['dataset_id', 'event_id', 'ts', 'severity', 'bytes_raw'];
  const assignedAtLoad = ['seq'];
  assert.deepEqual(
    eventColumnList.map((c) => c.name).sort(),
    [...fromHeader, ...perEvent, ...batchTextFields, ...assignedAtLoad].sort(),
  );
  // The text fields are the description's free-text columns, in the record's order.
  assert.deepEqual(
    eventColumnList.filter((c) => c.sql === 'VARCHAR' && c.name !== 'dataset_id').map((c) => c.name),
    [...batchTextFields],
  );
  const reader = new BatchReader(encodeBatch({ orgId: 'O', projectId: 'P', mode: 'live' }, 5, [{ datasetId: 'ds', eventId: newEventId(), clientEventId: false, ts: 7, severity: 2, bytesRaw: 9, event: 'e', actor: null, source: 's', message: 'm', payload: '{}' }]));
  assert.ok(reader.next());
  assert.deepEqual([reader.datasetId, reader.ts, reader.severity, reader.bytesRaw, reader.ingestedAt], ['ds', 7, 2, 9, 5]);
});
