import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventStoreResourceError } from '../event-store.js';
import { isOutOfMemory, ReadGate } from './read-gate.js';

const oom = () => new Error('Out of Memory Error: failed to allocate data of size 8.0 MiB (53.4 MiB/61.0 MiB used)');
const tick = () => new Promise((resolve) => setImmediate(resolve));

test('DuckDB out-of-memory errors are told apart from other failures', () => {
  assert.equal(isOutOfMemory(oom()), true);
  assert.equal(isOutOfMemory(new Error('Out of Memory Error: failed to offload data block of size 256.0 KiB (max_temp_directory_size)')), true);
  assert.equal(isOutOfMemory(new Error('Binder Error: column "x" not found')), false);
  assert.equal(isOutOfMemory('Out of Memory Error'), false);
});

test('a read out of memory alone fails at once with EventStoreResourceError; other errors pass through', async () => {
  const gate = new ReadGate();
  let runs = 0;
  const error = await gate.run(async () => {
    runs++;
    throw oom();
  }).catch((e: unknown) => e);
  assert.ok(error instanceof EventStoreResourceError);
  assert.match((error as Error).message, /more memory/);
  assert.equal(runs, 1);
  await assert.rejects(gate.run(async () => {
    throw new Error('Binder Error');
  }), /Binder Error/);
  assert.equal(await gate.run(async () => 7), 7);
});

test('reads out of memory beside others are retried one at a time with the engine to themselves: the victim answers, the hog fails alone', async () => {
  const gate = new ReadGate();
  const log: string[] = [];
  let inFlight = 0;
  // The hog fails whenever it runs; the victim fails when it did not start alone.
  const read = (name: string, fails: () => boolean) => async () => {
    const alone = ++inFlight === 1;
    log.push(`start ${name}`);
    await tick();
    await tick();
    inFlight--;
    if (fails() || !alone) {
      log.push(`oom ${name}`);
      throw oom();
    }
    log.push(`done ${name}`);
    return name;
  };
  const hog = gate.run(read('hog', () => true)).catch((e: unknown) => e);
  const victim = gate.run(read('victim', () => false));
  assert.equal(await victim, 'victim');
  const hogError = await hog;
  assert.ok(hogError instanceof EventStoreResourceError);
  // Both ran side by side and failed; then each ran alone, one after the other.
  assert.deepEqual(log, ['start hog', 'start victim', 'oom hog', 'oom victim', 'start hog', 'oom hog', 'start victim', 'done victim']);
  // Afterwards reads share the engine again.
  assert.deepEqual(await Promise.all([gate.run(async () => 1), gate.run(async () => 2)]), [1, 2]);
});

test('an exclusive retry waits for the running reads; new reads wait behind it', async () => {
  const gate = new ReadGate();
  const order: string[] = [];
  let releaseLong!: () => void;
  const long = gate.run(() => new Promise<string>((resolve) => (releaseLong = () => resolve('long'))));
  let failedOnce = false;
  const retried = gate.run(async () => {
    order.push(failedOnce ? 'retry alone' : 'first try');
    if (!failedOnce) {
      failedOnce = true;
      throw oom();
    }
    return 'retried';
  });
  await tick();
  // The retry waits for `long`; a new read waits for the retry.
  const later = gate.run(async () => {
    order.push('later');
    return 'later';
  });
  await tick();
  assert.deepEqual(order, ['first try']);
  releaseLong();
  assert.deepEqual(await Promise.all([long, retried, later]), ['long', 'retried', 'later']);
  assert.deepEqual(order, ['first try', 'retry alone', 'later']);
});

test('whenIdle runs its task only with no read running or waiting, and reads that arrive meanwhile wait for it', async () => {
  const gate = new ReadGate();
  const log: string[] = [];
  let release!: () => void;
  const reading = gate.run(async () => {
    log.push('read 1');
    await new Promise<void>((resolve) => (release = resolve));
  });
  await tick();
  assert.equal(await gate.whenIdle(async () => log.push('task while reading')), undefined, 'skipped while a read runs');
  release();
  await reading;
  let finish!: () => void;
  const task = gate.whenIdle(async () => {
    log.push('task start');
    await new Promise<void>((resolve) => (finish = resolve));
    log.push('task end');
    return 'done';
  });
  await tick();
  const later = gate.run(async () => log.push('read 2'));
  await tick();
  assert.deepEqual(log, ['read 1', 'task start'], 'the read waits for the task');
  finish();
  assert.equal(await task, 'done');
  await later;
  assert.deepEqual(log, ['read 1', 'task start', 'task end', 'read 2']);
});
