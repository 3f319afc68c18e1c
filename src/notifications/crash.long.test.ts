import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exited, freePort, serveProcess } from '../test-support/test-process.js';
import { eventually, startReceiver } from '../test-support/notifications/test-receiver.js';
import { call, processStore } from '../test-support/notifications/test-processes.js';

test('kill -9 while a notification is being sent: after the restart it is sent again, with the same delivery id, once its lease ends', { timeout: 180_000 }, async () => {
  const store = await processStore('ops-notify-crash-');
  // The first request is never answered: the process dies holding it.
  const receiver = await startReceiver(['hang', { status: 200 }]);
  const port = await freePort();
  // A receiver left listening keeps the file alive until the runner's timeout: closed if the server does not start.
  let child = await serveProcess(store.dataDir, port, store.env).catch(async (error: unknown) => {
    await receiver.close();
    throw error;
  });
  try {
    const channel = await call(port, store.token, 'POST', '/channels', { name: 'crash', kind: 'webhook', url: receiver.url });
    assert.equal(channel.status, 201, channel.text);
    const sent = await call(port, store.token, 'POST', `/channels/${channel.body.id}/test`);
    assert.equal(sent.status, 202, sent.text);
    await receiver.waitFor(1);
    child.kill('SIGKILL');
    await exited(child);

    child = await serveProcess(store.dataDir, port, store.env);
    const [first, second] = await receiver.waitFor(2, 60_000);
    assert.equal(first!.headers['x-ops-delivery-id'], sent.body.delivery_id);
    assert.equal(second!.headers['x-ops-delivery-id'], sent.body.delivery_id);
    const [delivery] = await eventually(
      async () => (await call(port, store.token, 'GET', `/channels/${channel.body.id}/deliveries`)).body.deliveries,
      (list: Array<{ state: string; last_error: string | null; attempts: Array<{ status: number | null }> }>) => list[0]?.state === 'delivered',
    );
    // The killed attempt left no record (it never finished); the one after the restart did.
    assert.deepEqual(delivery!.attempts.map((a) => a.status), [200]);
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(receiver.received.length, 2, 'sent once after the restart');
  } finally {
    child.kill('SIGKILL');
    await exited(child);
    await receiver.close();
    await store.drop();
  }
});
