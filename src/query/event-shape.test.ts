import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FormatRegistry, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { severities, type StoredEvent } from '../shared/event-record.js';
import type { Tenant } from '../tenancy/tenant.js';
import { ApiEventSchema, apiEventJson, EventPageWriter, iso } from './event-shape.js';

/** The API Event as an object, field by field from SPEC.md §2.4: what apiEventJson must write. */
function reference(e: StoredEvent, tenant: Tenant, includeTenant: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { event_id: e.event_id, ts: new Date(e.ts).toISOString(), ingested_at: new Date(e.ingested_at).toISOString() };
  if (includeTenant) {
    out.org_id = tenant.orgId;
    out.project_id = tenant.projectId;
  }
  out.dataset = e.dataset;
  out.severity = severities[e.severity];
  out.event = e.event;
  if (e.actor !== null) out.actor = e.actor;
  if (e.source !== null) out.source = e.source;
  out.message = e.message;
  out.payload = JSON.parse(e.payloadJson);
  out.bytes_raw = e.bytes_raw;
  return out;
}

const text = fc.string({ unit: 'binary', maxLength: 40 });
const storedEvent: fc.Arbitrary<StoredEvent> = fc.record({
  seq: fc.nat(),
  event_id: fc.uuid(),
  ts: fc.integer({ min: 0, max: 253_402_300_799_999 }),
  ingested_at: fc.integer({ min: 0, max: 253_402_300_799_999 }),
  dataset: text,
  severity: fc.integer({ min: 0, max: severities.length - 1 }),
  event: text,
  actor: fc.option(text),
  source: fc.option(text),
  message: text,
  // Ingest stores the payload as JSON.stringify wrote it.
  payloadJson: fc.dictionary(text, fc.jsonValue({ maxDepth: 3 })).map((p) => JSON.stringify(p)),
  bytes_raw: fc.nat(),
});

// TypeBox checks formats only once they are registered: the two the API event uses, strictly.
FormatRegistry.Set('uuid', (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(v));
// …and it cannot check the Unsafe severity: the same enum as a union of literals.
const CheckedEvent = { ...ApiEventSchema, properties: { ...ApiEventSchema.properties, severity: Type.Union(severities.map((s) => Type.Literal(s))) } };
FormatRegistry.Set('date-time', (v) => /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$/.test(v) && !Number.isNaN(Date.parse(v)));

test('apiEventJson writes exactly JSON.stringify of the API event, valid under its schema (random events)', () => {
  fc.assert(
    fc.property(storedEvent, fc.record({ orgId: text, projectId: text, mode: fc.constantFrom('live' as const, 'test' as const) }), fc.boolean(), (e, tenant, includeTenant) => {
      const json = apiEventJson(e, tenant, { includeTenant });
      const expected = reference(e, tenant, includeTenant);
      assert.equal(json, JSON.stringify(expected));
      assert.ok(Value.Check(CheckedEvent, JSON.parse(json)), `${json}: ${[...Value.Errors(CheckedEvent, JSON.parse(json))].map((x) => x.message).join('; ')}`);
    }),
    { numRuns: 500 },
  );
});

test('iso writes what toISOString writes: any millisecond, runs of one day, days apart, and the edges', () => {
  const day = 86_400_000;
  const edges = [0, 1, 999, day - 1, day, 951_782_400_000 /* 2000-02-29 */, 253_402_300_799_999, 253_402_300_800_000, -1, -day, 1.5, 8.64e15];
  for (const ms of edges) assert.equal(iso(ms), new Date(ms).toISOString(), String(ms));
  fc.assert(
    fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.array(fc.integer({ min: 0, max: day }), { maxLength: 8 }), (start, steps) => {
      // A page's times: one start, then times close to it (the cached day reused) or a day or more away.
      let ms = start;
      for (const step of [0, ...steps]) {
        ms += step;
        if (Math.abs(ms) > 8.64e15) return;
        assert.equal(iso(ms), new Date(ms).toISOString(), String(ms));
      }
    }),
    { numRuns: 2000 },
  );
});

test('EventPageWriter writes what apiEventJson writes, page after page, whatever changed in between (random pages)', () => {
  const tenants: Tenant[] = [
    { orgId: 'org_a', projectId: 'prj_a', mode: 'live' },
    { orgId: 'org_a', projectId: 'prj_b', mode: 'live' },
    { orgId: 'org_b', projectId: 'prj_a', mode: 'test' },
  ];
  // What may differ between two pages holding an event of the same id: its dataset's name (a
  // rename), any other field (an id reused after a retention delete, or by another tenant).
  const change = fc.oneof(
    fc.record({ dataset: text }),
    fc.record({ message: text }),
    fc.record({ payloadJson: fc.dictionary(text, fc.jsonValue({ maxDepth: 2 })).map((p) => JSON.stringify(p)) }),
    fc.record({ ts: fc.nat(), ingested_at: fc.nat() }),
    fc.record({ severity: fc.integer({ min: 0, max: severities.length - 1 }), actor: fc.option(text), source: fc.option(text), event: text, bytes_raw: fc.nat() }),
  );
  const step = fc.record({
    tenant: fc.nat({ max: tenants.length - 1 }),
    picks: fc.array(fc.nat({ max: 7 }), { maxLength: 6 }),
    changes: fc.array(fc.tuple(fc.nat({ max: 7 }), change), { maxLength: 2 }),
  });
  fc.assert(
    fc.property(fc.array(storedEvent, { minLength: 8, maxLength: 8 }), fc.array(step, { minLength: 1, maxLength: 12 }), (pool, steps) => {
      // Small bounds, so entries and pages are also dropped and written again.
      const writer = new EventPageWriter(5, 2);
      const events = [...pool];
      for (const { tenant, picks, changes } of steps) {
        for (const [i, c] of changes) events[i] = { ...events[i]!, ...c };
        // Copies, as the event store hands out: the same strings, other objects.
        const page = picks.map((i) => ({ ...events[i]! }));
        const expected = page.map((e) => apiEventJson(e, tenants[tenant]!)).join(',');
        assert.equal(writer.write(page, tenants[tenant]!).toString(), expected);
        // Asked again unchanged: the same text (now from what was kept).
        assert.equal(writer.write(page.map((e) => ({ ...e })), tenants[tenant]!).toString(), expected);
      }
    }),
    { numRuns: 300 },
  );
});
