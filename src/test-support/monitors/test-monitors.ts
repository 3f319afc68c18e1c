import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-server.js';
import { startReceiver } from '../notifications/test-receiver.js';

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A webhook notification's body as the tests read it (docs/notifications.md, "Requests"). */
export interface NotificationBody {
  delivery_id: string;
  monitor: { id: string; kind: string };
  status: string;
  group: Record<string, unknown>;
  value: number;
  events_total: number;
  events: Array<{ message?: string }>;
}

export interface MonitorsTestServer {
  /** The server, once the suite's `before` ran. */
  readonly s: TestServer;
  /** A webhook channel (of `token`'s project and mode, named `name`) pointed at a new loopback receiver. */
  channel(token?: string, name?: string): Promise<[string, Receiver]>;
}

/**
 * The monitors suites' server (call it inside a `describe`): loopback receivers allowed, and a
 * scheduler tick of an hour, so each test moves the clock and calls `evaluateDue()` itself.
 * Its receivers are closed with it.
 */
export function monitorsTestServer(): MonitorsTestServer {
  let server: TestServer | undefined;
  const receivers: Receiver[] = [];
  before(async () => {
    server = await startTestServer({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true' }, monitors: { tickMs: 3_600_000 } });
  });
  after(async () => {
    await server?.close();
    for (const r of receivers) await r.close();
  });
  return {
    get s() {
      assert.ok(server, 'the suite has started');
      return server;
    },
    async channel(token?: string, name = 'hook') {
      const receiver = await startReceiver();
      receivers.push(receiver);
      const res = await this.s.request('POST', '/channels', { token: token ?? this.s.tenants.a.token, json: { name, kind: 'webhook', url: receiver.url } });
      assert.equal(res.status, 201, res.text);
      return [res.body.id as string, receiver];
    },
  };
}
