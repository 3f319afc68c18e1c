import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { MonitorLane } from './read-lane.js';

/** A read held until the test lets it go. */
function held(log: string[], name: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    release,
    read: async () => {
      log.push(`start ${name}`);
      await gate;
      log.push(`end ${name}`);
      return name;
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test("the monitors' lane runs its statements one at a time, in order, on one connection of its own, and the answers are DuckDB's", async () => {
  const instance = await DuckDBInstance.create(':memory:');
  const connections = new Set<DuckDBConnection>();
  const lane = new MonitorLane(async () => instance.connect());
  let inFlight = 0;
  let most = 0;
  const statement = (n: number) => async (connection: DuckDBConnection) => {
    connections.add(connection);
    most = Math.max(most, ++inFlight);
    const rows = (await connection.runAndReadAll(`SELECT ${n} + count(*) FROM range(100000)`)).getRows();
    inFlight--;
    return Number(rows[0]![0]);
  };
  assert.deepEqual(await Promise.all([1, 2, 3, 4].map((n) => lane.run(statement(n)))), [100001, 100002, 100003, 100004]);
  assert.equal(most, 1, 'never two at once');
  assert.equal(connections.size, 1, 'one connection, kept open');
  await lane.close();
  await assert.rejects(lane.run(statement(5)), /event store closed/);
  instance.closeSync();
});

test("a lane statement waits for the API reads in flight; an API read never waits for the lane", async () => {
  const log: string[] = [];
  const lane = new MonitorLane(async () => ({}) as DuckDBConnection, 60_000);
  const api = held(log, 'api');
  const apiDone = lane.api(api.read);
  const monitor = lane.run(async () => {
    log.push('monitor');
    return 'monitor';
  });
  await tick();
  assert.deepEqual(log, ['start api'], 'the lane waits while the API read runs');
  api.release();
  assert.equal(await apiDone, 'api');
  assert.equal(await monitor, 'monitor');
  assert.deepEqual(log, ['start api', 'end api', 'monitor']);

  // The other way round: an API read that starts while a lane statement runs is not held by it.
  log.length = 0;
  const slow = held(log, 'monitor');
  const running = lane.run(slow.read);
  await tick();
  assert.equal(await lane.api(async () => 'api'), 'api');
  assert.deepEqual(log, ['start monitor']);
  slow.release();
  assert.equal(await running, 'monitor');
});

test('a steady API load delays a lane statement by the bound at most: it is never starved', async () => {
  const log: string[] = [];
  const lane = new MonitorLane(async () => ({}) as DuckDBConnection, 1);
  const api = held(log, 'api');
  const apiDone = lane.api(api.read);
  // The API read never ends while the lane statement waits: the lane goes ahead after its bound.
  assert.equal(await lane.run(async () => 'monitor'), 'monitor');
  assert.deepEqual(log, ['start api']);
  api.release();
  await apiDone;
});
