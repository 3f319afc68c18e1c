import { connect, type Msg, type NatsConnection } from 'nats';
import type { Logger } from '../kernel/logger.js';
import { redactUrl } from './redact-url.js';
import { busJsonReplacer, parseMessage, Subscribers, topics, type Bus, type BusMessages, type BusState, type Topic } from './bus.js';

/** Subjects are `opsplatform.<topic>`: one wildcard subscription per process hears them all. */
const subjectPrefix = 'opsplatform.';
/** How long `flush` waits for the server's answer, or for a first connection in progress. */
const flushTimeoutMs = 500;
/** Messages published before the first connection, kept (oldest dropped) and sent once it is up. */
const maxEarly = 1_000;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface NatsBusOptions {
  url: string;
  log: Logger;
  /** The name the NATS server's monitoring shows for this connection. */
  name?: string;
  /** How long one connection attempt may take (an address that drops packets). */
  connectTimeoutMs?: number;
}

/**
 * The bus over NATS core pub/sub (docs/cross-process.md). Connects on first use (publish,
 * subscribe or `connect()`), without ever blocking a caller: until connected — and whenever
 * the server is unreachable — messages still reach this process's subscribers and other
 * processes miss them (each is a hint with a fallback). Retries the first connection with
 * backoff forever; once connected, the client itself reconnects forever with backoff.
 * `noEcho`: the server does not send this connection's own messages back, since `publish`
 * already delivered them here.
 */
export class NatsBus implements Bus {
  private readonly subscribers: Subscribers;
  private nc: NatsConnection | undefined;
  private phase: 'idle' | 'connecting' | 'up' | 'down' | 'closed' = 'idle';
  private firstAttempt: Promise<void> | undefined;
  /** The connection attempt under way, if any: close() waits for it (bounded by its timeout). */
  private attempting: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private downSince = 0;
  private failures = 0;
  private early: Array<[Topic, unknown]> = [];

  constructor(private readonly options: NatsBusOptions) {
    this.subscribers = new Subscribers((error, topic) => options.log.warn({ err: error }, `bus: a ${topic} subscriber failed`));
  }

  state(): BusState {
    return this.phase === 'up' ? 'up' : 'down';
  }

  async ready(ms: number): Promise<void> {
    this.connect();
    if (this.phase === 'connecting' && this.firstAttempt) await withTimeout(this.firstAttempt, ms);
  }

  private connect(): void {
    if (this.phase === 'idle') this.firstAttempt = this.dial();
  }

  private dial(): Promise<void> {
    const attempt = this.attempt().finally(() => {
      if (this.attempting === attempt) this.attempting = undefined;
    });
    this.attempting = attempt;
    return attempt;
  }

  publish<T extends Topic>(topic: T, message: BusMessages[T]): void {
    this.subscribers.deliver(topic, message);
    this.connect();
    if (this.phase === 'closed') return;
    if (!this.nc) {
      if (this.early.length >= maxEarly) this.early.shift();
      this.early.push([topic, message]);
      return;
    }
    this.send(this.nc, topic, message);
  }

  subscribe<T extends Topic>(topic: T, handler: (message: BusMessages[T]) => void): void {
    this.subscribers.add(topic, handler);
    this.connect();
  }

  async flush(): Promise<void> {
    // A first connection in progress is waited for (opsctl connects on its first publish).
    if (this.phase === 'connecting' && this.firstAttempt) await withTimeout(this.firstAttempt, flushTimeoutMs);
    const nc = this.nc;
    if (this.phase !== 'up' || !nc) return;
    try {
      await withTimeout(nc.flush(), flushTimeoutMs);
    } catch {
      // Down in the meantime: the status watcher reports it; the caller's answer must not wait.
    }
  }

  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    clearTimeout(this.retry);
    // An attempt under way closes what it opens once it sees 'closed'.
    await this.attempting;
    const nc = this.nc;
    this.nc = undefined;
    if (!nc) return;
    try {
      await withTimeout(nc.flush(), flushTimeoutMs);
    } catch {
      // Unreachable: nothing more can be sent anyway.
    }
    await nc.close();
  }

  private send(nc: NatsConnection, topic: Topic, message: unknown): void {
    try {
      // While the client reconnects it buffers what is published and sends it once back.
      nc.publish(subjectPrefix + topic, encoder.encode(JSON.stringify(message, busJsonReplacer)));
    } catch (error) {
      this.options.log.debug({ err: error }, `bus: a ${topic} message could not be sent to NATS`);
    }
  }

  private receive(msg: Msg): void {
    const topic = msg.subject.slice(subjectPrefix.length) as Topic;
    if (!topics.includes(topic)) return;
    let data: unknown;
    try {
      data = JSON.parse(decoder.decode(msg.data));
    } catch {
      return;
    }
    const message = parseMessage(topic, data);
    if (message) this.subscribers.deliver(topic, message);
  }

  private async attempt(): Promise<void> {
    // Retries after a failed first attempt stay 'down' (logged once), not 'connecting' again.
    if (this.phase === 'idle') this.phase = 'connecting';
    let nc: NatsConnection;
    try {
      nc = await connect({
        servers: this.options.url,
        name: this.options.name ?? 'opsplatform',
        noEcho: true,
        timeout: this.options.connectTimeoutMs ?? 2_000,
        reconnect: true,
        maxReconnectAttempts: -1,
        // Backoff: the longer the outage, the longer between attempts (0.25 s up to 5 s).
        reconnectDelayHandler: () => (this.downSince === 0 ? 250 : Math.min(5_000, Math.max(250, (Date.now() - this.downSince) / 4))),
        // A server that stops answering without closing the socket is noticed within ~15 s.
        pingInterval: 5_000,
        maxPingOut: 2,
      });
    } catch (error) {
      if ((this.phase as string) === 'closed') return;
      this.wentDown(error);
      this.failures++;
      const wait = Math.min(5_000, 250 * 2 ** Math.min(this.failures - 1, 5));
      this.retry = setTimeout(() => void this.dial(), wait);
      this.retry.unref();
      return;
    }
    if ((this.phase as string) === 'closed') {
      await nc.close();
      return;
    }
    this.nc = nc;
    this.failures = 0;
    nc.subscribe(`${subjectPrefix}>`, { callback: (error, msg) => error || this.receive(msg) });
    this.cameUp();
    for (const [topic, message] of this.early.splice(0)) this.send(nc, topic, message);
    void this.watch(nc);
  }

  /** Follows the connection: disconnected, reconnected, or closed for good. */
  private async watch(nc: NatsConnection): Promise<void> {
    void nc.closed().then((error) => {
      if (this.phase === 'closed' || this.nc !== nc) return;
      // Closed by the client library itself (it does not give up with maxReconnectAttempts -1,
      // but a fatal protocol error closes it): start over.
      this.nc = undefined;
      this.wentDown(error);
      this.retry = setTimeout(() => void this.dial(), 1_000);
      this.retry.unref();
    });
    for await (const status of nc.status()) {
      if (this.phase === 'closed') return;
      if (status.type === 'disconnect') this.wentDown(undefined);
      else if (status.type === 'reconnect') this.cameUp();
    }
  }

  /** Logged once per outage, not per message. */
  private wentDown(error: unknown): void {
    if (this.phase === 'down' || this.phase === 'closed') return;
    const first = this.phase === 'connecting' && this.downSince === 0;
    this.phase = 'down';
    this.downSince = Date.now();
    this.options.log.warn(
      { err: error, nats: redactUrl(this.options.url) },
      first
        ? 'bus: NATS is unreachable; retrying with backoff. Until it answers, tail wake-ups and token revocations reach only this process (tail polls; token caches expire within OPS_AUTH_CACHE_MS)'
        : 'bus: lost the connection to NATS; reconnecting with backoff. Meanwhile tail polls and token caches expire within OPS_AUTH_CACHE_MS',
    );
  }

  private cameUp(): void {
    if (this.phase === 'up' || this.phase === 'closed') return;
    const wasDown = this.phase === 'down';
    this.phase = 'up';
    this.downSince = 0;
    // The first connection is routine (opsctl makes one per revocation): debug; the end of an outage is news.
    if (wasDown) this.options.log.info({ nats: redactUrl(this.options.url) }, 'bus: connected to NATS again');
    else this.options.log.debug({ nats: redactUrl(this.options.url) }, 'bus: connected to NATS');
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}
