import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { canonicalFieldTypes, eventColumnList } from './event-columns.js';
import { schemaSql } from './duckdb/duckdb-sql.js';
import { eventTypes } from './duckdb/duckdb-chunk.js';
import { ApiEventSchema } from '../query/event-shape.js';

test('the events table DuckDB creates is the description, column for column', async () => {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  await connection.run(schemaSql);
  const rows = (await connection.runAndReadAll('DESCRIBE events')).getRows();
  assert.deepEqual(
    rows.map((r) => [r[0], r[1], r[2]]),
    eventColumnList.map((c) => [c.name, c.sql, c.nullable ? 'YES' : 'NO']),
  );
  assert.deepEqual(eventTypes.map((t) => t.toString()), eventColumnList.map((c) => c.sql), 'the loader appends the same types');
  connection.closeSync();
  instance.closeSync();
});

test('the API event carries every canonical field of the description, and payload', () => {
  const apiFields = Object.keys(ApiEventSchema.properties).filter((k) => k !== 'org_id' && k !== 'project_id');
  assert.deepEqual(apiFields.sort(), [...canonicalFieldTypes.map((f) => f.name), 'payload'].sort());
});
