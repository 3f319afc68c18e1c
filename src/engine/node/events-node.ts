import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../kernel/logger.js';
import type { Tenant } from '../../tenancy/tenant.js';
import type { EventStore } from '../event-store.js';
import { eventsNodeKey, eventsNodePrefix, nodeKeyHeader, toWireError, type EventsNodeMethod } from './remote-event-store.js';
import { decodeBatch, unframeAppend } from '../wal/event-batch.js';

/** Larger than any ingest request can become (SPEC's body limit, decoded): a bound, not a budget. */
const maxBodyBytes = 64 * 1024 * 1024;

class BadCall extends Error {}

function tenantOf(body: Record<string, unknown>): Tenant {
  const t = body.tenant as Partial<Tenant> | undefined;
  if (!t || typeof t.orgId !== 'string' || typeof t.projectId !== 'string' || (t.mode !== 'live' && t.mode !== 'test')) {
    throw new BadCall('tenant {orgId, projectId, mode} is required');
  }
  return { orgId: t.orgId, projectId: t.projectId, mode: t.mode };
}

// The callers are this installation's API processes (they proved the key), which validated the
// request already; the node checks only what keeps it whole: the tenant, and that the body is JSON.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;
const methods: Record<Exclude<EventsNodeMethod, 'append-batch'>, (store: EventStore, body: Body) => Promise<unknown>> = {
  append: (store, body) => store.append(tenantOf(body), body.events),
  soql: (store, body) => store.soql(tenantOf(body), body.request),
  query: (store, body) => store.query(tenantOf(body), body.request),
  aggregate: (store, body) => store.aggregate(tenantOf(body), body.request),
  stats: (store, body) => store.stats(tenantOf(body), body.request),
  'rollup-counts': async (store, body) => [...(await store.rollupCounts(tenantOf(body), body.datasetIds, body.sinceMs))],
  'field-stats': (store, body) => store.fieldStats(tenantOf(body), body.request),
  'delete-before': (store, body) => store.deleteBefore(tenantOf(body), body.datasetId, body.beforeMs),
  'read-after': (store, body) => store.readAfter(tenantOf(body), body.request),
  'last-seq': (store) => store.lastSeq(),
  'tail-start': (store, body) => store.tailStart(tenantOf(body)),
  'loaded-positions': (store) => store.loadedPositions(),
  'set-hot-keys': async (store, body) => {
    await store.setHotKeys(tenantOf(body), body.datasetId, body.keys);
    return { ok: true };
  },
  'hot-layouts': (store, body) => store.hotLayouts(tenantOf(body), body.datasetIds),
  dialect: (store) => store.dialect(),
  ping: async (store) => {
    await store.ping();
    return { ok: true };
  },
};

/**
 * An append as the API processes send it (event-batch.ts's frameAppend): the batch body the log
 * stores, checked here, so the node neither parses JSON nor encodes the events a second time.
 * A batch with client event ids is read back into events for their de-duplication.
 */
async function appendBatch(store: EventStore, frame: Buffer) {
  let parsed: ReturnType<typeof unframeAppend>;
  try {
    parsed = unframeAppend(frame);
  } catch (error) {
    throw new BadCall((error as Error).message);
  }
  const { tenant, count, body, clientIds } = parsed;
  if (!clientIds && store.appendEncoded) return store.appendEncoded(tenant, body, count);
  const { events } = decodeBatch(body);
  if (clientIds) events.forEach((e, i) => (e.clientEventId = clientIds(i)));
  return store.append(tenant, events);
}

export interface EventsNodeServer {
  /** http://host:port the node answers on (OPS_EVENTS_URL for the API processes). */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves an EventStore this process owns to the installation's other API processes
 * (RemoteEventStore is the other end). Only callers that prove the secret key are answered.
 */
export async function serveEventsNode(
  store: EventStore,
  options: { host: string; port: number; secret: Buffer; log: Logger; keepAliveTimeoutMs?: number },
): Promise<EventsNodeServer> {
  const expected = Buffer.from(eventsNodeKey(options.secret));
  const authorised = (given: string | string[] | undefined) => {
    if (typeof given !== 'string') return false;
    const buffer = Buffer.from(given);
    return buffer.length === expected.length && crypto.timingSafeEqual(buffer, expected);
  };
  const server = http.createServer((request, response) => {
    const answer = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-ops-backlog': String(store.backlog) });
      response.end(text);
    };
    const method = request.url?.startsWith(`${eventsNodePrefix}/`) ? (request.url.slice(eventsNodePrefix.length + 1) as EventsNodeMethod) : undefined;
    if (request.method !== 'POST' || !method || (method !== 'append-batch' && !Object.hasOwn(methods, method))) {
      request.resume();
      return answer(404, { error: { kind: 'bad_request', message: 'unknown events node call' } });
    }
    if (!authorised(request.headers[nodeKeyHeader])) {
      request.resume();
      return answer(401, { error: { kind: 'bad_request', message: 'the caller did not prove the installation secret key (OPS_SECRET_KEY must be the same on every process)' } });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        answer(413, { error: { kind: 'bad_request', message: `a call may carry at most ${maxBodyBytes} bytes` } });
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (method === 'append-batch') return appendBatch(store, Buffer.concat(chunks)).then((result) => answer(200, result), failed);
      let body: Body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body;
        if (typeof body !== 'object' || body === null) throw new BadCall('the body must be a JSON object');
      } catch (error) {
        return answer(400, { error: { kind: 'bad_request', message: (error as Error).message } });
      }
      // A call that throws before its promise (a bad tenant) is answered like one that rejects.
      Promise.resolve(body)
        .then((b) => methods[method](store, b))
        .then((result) => answer(200, result ?? null), failed);
    });
    const failed = (error: unknown) => {
      if (error instanceof BadCall) return answer(400, { error: { kind: 'bad_request', message: error.message } });
      const wire = toWireError(error);
      if (wire.status === 500) options.log.error({ err: error, call: method }, 'events node: a call failed');
      answer(wire.status, wire.body);
    };
  });
  // Calls wait for the loader (read-your-writes) and for DuckDB: no request timeout of our own,
  // the caller bounds its wait. Idle kept-alive connections are closed after a while
  // (OPS_KEEPALIVE_TIMEOUT_MS, as the API's listeners; RemoteEventStore drops its own after 30 s).
  server.requestTimeout = 0;
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
