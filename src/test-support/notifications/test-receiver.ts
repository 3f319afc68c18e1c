import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a test receiver got. */
export interface Received {
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** How the receiver answers one request: status, headers, body; `hang` never answers. */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/**
 * A real HTTP server on 127.0.0.1 for delivery tests: it records every request and answers
 * from a script (the last answer repeats), like a webhook receiver or Discord would.
 */
export async function startReceiver(script: Answer[] | ((request: Received, index: number) => Answer) = [{ status: 200 }]) {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: Received = { at: Date.now(), path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const index = received.push(request) - 1;
      for (const wake of waiters.splice(0)) wake();
      const answer = typeof script === 'function' ? script(request, index) : (script[Math.min(index, script.length - 1)] ?? { status: 200 });
      if (answer === 'hang') return void hanging.add(res);
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    /** Resolves once `count` requests arrived (or rejects after `timeoutMs`). */
    async waitFor(count: number, timeoutMs = 20_000): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the receiver got ${received.length} requests, expected ${count}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
      return received;
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `read` until `done` says so (or fails after `timeoutMs`). */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not reached in ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
