// docs/monitors.md shows receivers a webhook receiver that checks the signature; this runs that
// very block as its own process against the server's deliveries, so the docs cannot drift from
// what the server signs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { freePort } from '../test-support/test-process.js';
import { signatureHeader } from './signature.js';
import { eventually } from '../test-support/notifications/test-receiver.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The ```js block right after `<!-- receiver.mjs -->` in docs/monitors.md. */
function documentedReceiver(): string {
  const doc = fs.readFileSync(path.join(repoRoot, 'docs/monitors.md'), 'utf8');
  const found = /<!-- receiver\.mjs -->\n```js\n([\s\S]*?)\n```/.exec(doc);
  assert.ok(found, 'docs/monitors.md holds the receiver block');
  return found[1]!;
}

interface RunningReceiver {
  url: string;
  port: number;
  /** What it printed: one line per delivery it acted on. */
  lines(): string[];
  stop(): void;
}

/** The documented receiver as its own process on `port`, holding `secret`. */
async function runReceiver(dir: string, port: number, secret: string): Promise<RunningReceiver> {
  const file = path.join(dir, 'receiver.mjs');
  fs.writeFileSync(file, documentedReceiver());
  const child: ChildProcess = spawn(process.execPath, [file], { env: { ...process.env, OPS_SIGNING_SECRET: secret, PORT: String(port) }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  // Up once it answers; an unsigned request is refused.
  await eventually(
    () => fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' }).then((r) => r.status, () => 0),
    (status) => status === 401,
  );
  return { url: `http://127.0.0.1:${port}/hook`, port, lines: () => out.split('\n').filter(Boolean), stop: () => void child.kill('SIGKILL') };
}

describe('the receiver in docs/monitors.md, run against real deliveries', () => {
  let s: TestServer;
  let dir: string;
  const running: RunningReceiver[] = [];
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-receiver-doc-'));
    s = await startTestServer({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true' }, notifications: { timeoutMs: 2000, backoffBaseMs: 200 } });
  });
  after(async () => {
    for (const r of running) r.stop();
    await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const deliveries = async (channelId: string) => (await s.request('GET', `/channels/${channelId}/deliveries`)).body.deliveries as Array<{ delivery_id: string; state: string }>;

  test('accepts what the server signs, once per delivery id; refuses another secret, a changed body and an old signature', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hook`;
    const created = await s.request('POST', '/channels', { json: { name: 'docs receiver', kind: 'webhook', url } });
    assert.equal(created.status, 201, created.text);
    const secret = created.body.signing_secret as string;
    // The channel names a port chosen first; the receiver listens there with the secret it was given.
    const receiver = await runReceiver(dir, port, secret);
    running.push(receiver);

    const sent = await s.request('POST', `/channels/${created.body.id}/test`);
    assert.equal(sent.status, 202, sent.text);
    const id = sent.body.delivery_id as string;
    const [delivered] = await eventually(() => deliveries(created.body.id), (list) => list.length === 1 && list[0]!.state !== 'pending');
    assert.equal(delivered!.state, 'delivered', JSON.stringify(delivered));
    await eventually(async () => receiver.lines(), (lines) => lines.length === 1);
    assert.deepEqual(receiver.lines(), [`${id} test`]);

    // A retry of that delivery (same id, signed anew): answered 200, not acted on twice.
    const body = JSON.stringify({ version: '1', delivery_id: id, status: 'test' });
    const post = (text: string, header: string, deliveryId = id) =>
      fetch(receiver.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-ops-signature': header, 'x-ops-delivery-id': deliveryId }, body: text });
    const now = Math.floor(Date.now() / 1000);
    assert.equal((await post(body, signatureHeader(secret, body, now))).status, 200);
    assert.equal((await post(body.replace('test', 'firing'), signatureHeader(secret, body, now), 'dlv_other')).status, 401, 'a changed body');
    assert.equal((await post(body, signatureHeader(secret, body, now - 600), 'dlv_old')).status, 401, 'a signature 10 minutes old');
    assert.equal((await post(body, signatureHeader(`${secret}x`, body, now), 'dlv_forged')).status, 401, 'another secret');
    assert.equal((await post(body, '', 'dlv_unsigned')).status, 401, 'no signature');
    assert.deepEqual(receiver.lines(), [`${id} test`]);

    // Another channel (another secret) pointed at this receiver: refused with 401, failed at once.
    const other = await s.request('POST', '/channels', { json: { name: 'other secret', kind: 'webhook', url } });
    await s.request('POST', `/channels/${other.body.id}/test`);
    const [refused] = await eventually(() => deliveries(other.body.id), (list) => list.length === 1 && list[0]!.state !== 'pending');
    assert.equal(refused!.state, 'failed');
    assert.deepEqual(receiver.lines(), [`${id} test`]);
  });
});
