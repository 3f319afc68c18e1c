import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { MonitorLane } from './read-lane.js';
import { ThreadSwitch } from './thread-switch.js';

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

});

/** A scan of a few seconds on DuckDB: long enough to be interrupted in the middle. */
const longScan = 'SELECT count(*) FROM range(3000000000) t(i) WHERE i % 7 = 3';

test('an API read that starts while a lane statement runs interrupts it; the statement runs again after and answers the same', async () => {
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const lane = new MonitorLane(async () => instance.connect(), 1);
  let runs = 0;
  let release!: () => void;
  const apiGate = new Promise<void>((resolve) => (release = resolve));
  const monitor = lane.run(async (connection) => {
    runs++;
    // The first run scans until interrupted; the second answers at once.
    const rows = (await connection.runAndReadAll(runs === 1 ? longScan : 'SELECT 42')).getRows();
    return Number(rows[0]![0]);
  });
  while (runs === 0) await tick();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const started = performance.now();
  const api = lane.api(async () => {
    await apiGate;
    return 'api';
  });
  // The interrupted run ends at once (not after its seconds of scan) and waits for the API read.
  while (lane.yields === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  assert.ok(performance.now() - started < 1000, 'the scan stopped when the API read came');
  assert.equal(runs, 1, 'not run again while the API read is in flight');
  release();
  assert.equal(await api, 'api');
  assert.equal(await monitor, 42);
  assert.equal(runs, 2);
  await lane.close();
  instance.closeSync();
});

test('a lane statement yields at most maxYields times, and only while the yield budget lasts; errors of its own are not retried', async () => {
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  for (const [options, expectedYields] of [
    [{ maxYields: 2 }, 2],
    [{ maxBudgetMs: 0 }, 0],
  ] as const) {
    const lane = new MonitorLane(async () => instance.connect(), 1, options);
    let runs = 0;
    const monitor = lane.run(async (connection) => {
      runs++;
      const mine = runs;
      // The runs expected to yield scan for seconds, so the API read meets them however late its
      // timer fires on a loaded machine; the last one scans for a moment and is not interrupted.
      const scan = connection.runAndReadAll(mine <= expectedYields ? longScan : mine === expectedYields + 1 ? 'SELECT count(*) FROM range(300000000)' : 'SELECT 7');
      // Each run is met by a new API read a moment after it starts.
      setTimeout(() => void lane.api(async () => undefined), 5);
      return Number((await scan).getRows()[0]![0]);
    });
    const answer = await monitor;
    assert.equal(lane.yields, expectedYields, JSON.stringify(options));
    assert.equal(runs, expectedYields + 1);
    assert.ok(answer === 300000000 || answer === 7);
    await assert.rejects(
      lane.run((connection) => connection.run('SELECT * FROM no_such_table')),
      /no_such_table/,
    );
    assert.equal(lane.yields, expectedYields, 'an error of the statement is not a yield');
    await lane.close();
  }
  instance.closeSync();
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

test("with a thread switch, background work (the lane's statements, loads) runs on one DuckDB thread and every API read with the API's count, set before it starts; an idle background gives the API's count back", async () => {
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const setter = await instance.connect();
  const threads = new ThreadSwitch((n) => setter.run(`SET threads = ${n}`).then(() => undefined), 2, 1, 250);
  const lane = new MonitorLane(async () => instance.connect(), 1, { threads });
  const setting = async (connection: DuckDBConnection) => Number((await connection.runAndReadAll("SELECT current_setting('threads')")).getRows()[0]![0]);
  const other = await instance.connect();
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  assert.equal(await setting(other), 2, "the API's count before any background work");
  assert.equal(await lane.run(setting), 1, 'a lane statement runs on one thread');
  assert.equal(await threads.background(() => setting(other)), 1, 'so does a load');
  assert.equal(await lane.api(() => setting(other)), 2, 'an API read right after has the API count when it starts');
  assert.equal(await lane.run(setting), 1, 'and the next lane statement one thread again');

  // Background work that starts while an API read is in flight leaves the API's count.
  let release: (() => void) | undefined;
  const held = lane.api(() => new Promise<number>((resolve) => (release = () => void setting(other).then(resolve))));
  // The read starts once its switch is made.
  while (!release) await tick();
  assert.equal(await threads.background(() => setting(other)), 2, 'a load beside an API read runs with its count');
  release();
  assert.equal(await held, 2);

  // Back to back, background work does not switch between its statements.
  assert.equal(await threads.background(() => setting(other)), 1);
  const before = threads.switches;
  for (let i = 0; i < 5; i++) await lane.run(setting);
  await threads.background(() => setting(other));
  assert.equal(threads.switches, before);
  // Idle for longer than idleMs: back to the API's count without an API read asking.
  await sleep(700);
  assert.equal(await setting(other), 2);
  assert.equal(threads.switches, before + 1);
  assert.equal(await lane.api(() => setting(other)), 2);
  assert.equal(threads.switches, before + 1, 'no switch for a read when the count is already the API\'s');

  await lane.close();
  setter.closeSync();
  other.closeSync();
  instance.closeSync();
});
