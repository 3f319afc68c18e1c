import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { exited, freePort, opsctlArgs } from '../test-support/test-process.js';
import { FilesRepo } from '../media/files-repo.js';
import { PublicUrls } from '../kernel/public-urls.js';
import { ChannelService } from './channel-service.js';
import { Outbox } from './outbox.js';
import { NotificationService } from './notification-service.js';
import { startReceiver } from '../test-support/notifications/test-receiver.js';
import { call, processStore } from '../test-support/notifications/test-processes.js';

test('two API processes on one store (serve --workers 2): each notification is sent once', { timeout: 180_000 }, async () => {
  const store = await processStore('ops-notify-workers-');
  const receiver = await startReceiver([{ status: 200 }]);
  const port = await freePort();
  const primary = spawn(process.execPath, opsctlArgs('serve', '--workers', '2'), {
    env: { ...process.env, ...store.env, OPS_DATA_DIR: store.dataDir, OPS_PORT: String(port), OPS_CDN_PORT: String(await freePort()), OPS_HOST: '127.0.0.1', OPS_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const ctx = await store.open();
  try {
    for (let i = 0; i < 300 && !(await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 100));
    const channels = await Promise.all(
      [1, 2, 3].map(async (i) => (await call(port, store.token, 'POST', '/channels', { name: `c${i}`, kind: 'webhook', url: receiver.url })).body.id as string),
    );
    // Stored by a third process with no worker of its own: only the two servers' workers send them.
    const files = new FilesRepo(ctx.metadata);
    const service = new NotificationService(ctx.clock, new ChannelService(ctx.metadata.db, ctx.clock, true), new Outbox(ctx.metadata.db), files, new PublicUrls(ctx.config));
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const now = new Date().toISOString();
      const deliveries = await service.enqueue(store.tenant, {
        channelIds: channels,
        monitor: { id: `mon_${i}`, name: 'm', kind: 'match' },
        status: 'firing',
        group: {},
        value: i,
        condition: null,
        window: { from: now, to: now },
        started_at: now,
        events_total: 0,
        events: [],
        url: 'http://127.0.0.1/dashboard/',
      });
      ids.push(...deliveries.map((d) => d.delivery_id));
    }
    const received = await receiver.waitFor(ids.length, 60_000);
    // Time for a second send of any of them to show up.
    await new Promise((r) => setTimeout(r, 2_500));
    const sent = received.map((r) => String(r.headers['x-ops-delivery-id']));
    assert.equal(sent.length, ids.length, 'no notification sent twice');
    assert.deepEqual([...new Set(sent)].sort(), [...ids].sort());
    const unsent = await ctx.metadata.db.selectFrom('notifications').select(['state']).where('state', '!=', 'delivered').execute();
    assert.deepEqual(unsent, []);
  } finally {
    primary.kill('SIGTERM');
    await exited(primary);
    await ctx.close();
    await receiver.close();
    await store.drop();
  }
});
