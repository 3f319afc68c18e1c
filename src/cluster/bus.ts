import type { Tenant } from '../tenancy/tenant.js';

/**
 * What API processes tell each other (docs/cross-process.md). Every message is a hint about
 * state that lives in a store: losing one costs latency or a bounded staleness, never data.
 */
export interface BusMessages {
  /**
   * The tenant's events up to `lastSeq` are durable: live tail reads now rather than at its next
   * poll. On ClickHouse (src/tail/relay.ts) sent once the record is loaded, and carrying it: which
   * log's events, the chain that tells a reader whether it missed one (tail-record.ts), and the
   * events themselves when another process has sessions of the tenant (`tail.interest`),
   * authenticated by `mac`; without them a reader reads the store.
   */
  'tail.wake': { tenant: Tenant; lastSeq: number; record?: WakeRecord };
  /** This process (`from`) has live-tail sessions of the tenant: send its records' events along (for the next `interestTtlMs`). */
  'tail.interest': { tenant: Tenant; from: string };
  /** The token no longer authenticates: token caches drop it. */
  'token.revoked': { tokenId: string };
  /**
   * Something a cache holds about the organisation changed (its plan, which every cached
   * AuthContext of its tokens carries, or a member's role, which those acting for a member
   * carry): those caches drop what they hold of it.
   */
  'org.changed': { orgId: string };
  /** The tenant's monitors changed (created, changed, deleted): match monitors' caches drop the tenant. */
  'monitors.changed': { tenant: Tenant };
}

export type Topic = keyof BusMessages;

/** A write-ahead log record as `tail.wake` carries it (TailRecord without the tenant, which the message has). */
export interface WakeRecord {
  log: string;
  firstSeq: number;
  count: number;
  prev: number;
  /** The record's body: a Buffer in this process, base64 on NATS. */
  body?: Buffer;
  /** HMAC of the record under the installation's key (relay.ts), present with `body`. */
  mac?: string;
}

/** A record body larger than this travels without its events (NATS refuses messages over 1 MB by default; base64 adds a third). */
export const maxWakeBodyBytes = 512 * 1024;

/**
 * JSON.stringify's replacer for what goes on NATS: a Buffer (a record's body) as base64, not
 * Buffer#toJSON's array of numbers. A function, so `this[key]` is the value before toJSON.
 */
export function busJsonReplacer(this: unknown, key: string, value: unknown): unknown {
  const raw = (this as Record<string, unknown>)[key];
  return Buffer.isBuffer(raw) ? raw.toString('base64') : value;
}

/** 'off': no OPS_NATS_URL (one process; messages reach only it). 'down': configured but not connected. */
export type BusState = 'up' | 'down' | 'off';

/**
 * Messages between the API processes of one installation. A message published here reaches
 * every subscriber once: this process's synchronously, inside `publish`, and other processes'
 * through NATS. So the same subscription serves local and remote changes, and a process down
 * to itself (NATS unset or unreachable) still hears its own.
 */
export interface Bus {
  /** Fire and forget: never waits, never throws. Lost for other processes while the bus is down. */
  publish<T extends Topic>(topic: T, message: BusMessages[T]): void;
  /**
   * Resolves once what was published so far has reached the NATS server (which then routes it
   * to the other processes), or at once while the bus is down or off; bounded in time, never
   * rejects. What answers "revoked" awaits it, so another host refuses the token at once.
   */
  flush(): Promise<void>;
  subscribe<T extends Topic>(topic: T, handler: (message: BusMessages[T]) => void): void;
  state(): BusState;
  /**
   * Starts connecting if it has not, and resolves once connected or after `ms`, whichever comes
   * first (the server starts either way; it waits so its first requests already reach the others).
   */
  ready(ms: number): Promise<void>;
  /** Flushes what is pending (bounded) and disconnects; publishing afterwards only reaches this process. */
  close(): Promise<void>;
}

/** The subscribers of one process, by topic. */
export class Subscribers {
  private readonly handlers = new Map<Topic, Array<(message: never) => void>>();

  constructor(private readonly onError: (error: unknown, topic: Topic) => void) {}

  add<T extends Topic>(topic: T, handler: (message: BusMessages[T]) => void): void {
    const list = this.handlers.get(topic) ?? [];
    list.push(handler as (message: never) => void);
    this.handlers.set(topic, list);
  }

  /** Calls each handler of the topic; one that throws does not stop the others. */
  deliver<T extends Topic>(topic: T, message: BusMessages[T]): void {
    for (const handler of this.handlers.get(topic) ?? []) {
      try {
        (handler as (message: BusMessages[T]) => void)(message);
      } catch (error) {
        this.onError(error, topic);
      }
    }
  }
}

/** OPS_NATS_URL unset: one process, whose messages reach only its own subscribers. */
export class LocalBus implements Bus {
  private readonly subscribers: Subscribers;

  constructor(onError: (error: unknown, topic: Topic) => void = () => {}) {
    this.subscribers = new Subscribers(onError);
  }

  publish<T extends Topic>(topic: T, message: BusMessages[T]): void {
    this.subscribers.deliver(topic, message);
  }

  flush = async (): Promise<void> => {};

  subscribe<T extends Topic>(topic: T, handler: (message: BusMessages[T]) => void): void {
    this.subscribers.add(topic, handler);
  }

  state = (): BusState => 'off';

  ready = async (): Promise<void> => {};

  close = async (): Promise<void> => {};
}

/**
 * A message as it arrived from another process, checked field by field: anyone who can publish
 * on the NATS subjects can send bytes, and a malformed message must be dropped, not delivered.
 */
export function parseMessage<T extends Topic>(topic: T, data: unknown): BusMessages[T] | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const record = data as Record<string, unknown>;
  const isId = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= 200;
  switch (topic) {
    case 'tail.wake': {
      const tenant = parseTenant(record.tenant, isId);
      if (!tenant || typeof record.lastSeq !== 'number' || !Number.isFinite(record.lastSeq)) return undefined;
      const message: BusMessages['tail.wake'] = { tenant, lastSeq: record.lastSeq };
      if (record.record !== undefined) {
        const wake = parseWakeRecord(record.record);
        if (!wake) return undefined;
        message.record = wake;
      }
      return message as BusMessages[T];
    }
    case 'tail.interest': {
      const tenant = parseTenant(record.tenant, isId);
      return tenant && isId(record.from) ? ({ tenant, from: record.from } satisfies BusMessages['tail.interest'] as BusMessages[T]) : undefined;
    }
    case 'monitors.changed': {
      const tenant = parseTenant(record.tenant, isId);
      return tenant ? ({ tenant } satisfies BusMessages['monitors.changed'] as BusMessages[T]) : undefined;
    }
    case 'token.revoked':
      return isId(record.tokenId) ? ({ tokenId: record.tokenId } satisfies BusMessages['token.revoked'] as BusMessages[T]) : undefined;
    case 'org.changed':
      return isId(record.orgId) ? ({ orgId: record.orgId } satisfies BusMessages['org.changed'] as BusMessages[T]) : undefined;
    default:
      return undefined;
  }
}

const seqOf = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;

/** A record from another process: numbers that can be seqs, a log id, and a body only with its MAC. */
function parseWakeRecord(value: unknown): WakeRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  if (typeof r.log !== 'string' || !/^(?:[0-9a-f]{16})?$/.test(r.log)) return undefined;
  if (!seqOf(r.firstSeq) || !seqOf(r.count) || r.count < 1 || !seqOf(r.prev) || r.prev >= r.firstSeq) return undefined;
  const wake: WakeRecord = { log: r.log, firstSeq: r.firstSeq, count: r.count, prev: r.prev };
  if (r.body === undefined) return wake;
  const { body, mac } = r;
  if (typeof body !== 'string' || body.length % 4 !== 0 || body.length > ((maxWakeBodyBytes + 2) / 3) * 4 + 4 || !base64Pattern.test(body)) return undefined;
  if (typeof mac !== 'string' || !/^[A-Za-z0-9_-]{1,100}$/.test(mac)) return undefined;
  return { ...wake, body: Buffer.from(body, 'base64'), mac };
}

function parseTenant(value: unknown, isId: (value: unknown) => value is string): Tenant | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const tenant = value as Record<string, unknown>;
  if (!isId(tenant.orgId) || !isId(tenant.projectId) || (tenant.mode !== 'live' && tenant.mode !== 'test')) return undefined;
  return { orgId: tenant.orgId, projectId: tenant.projectId, mode: tenant.mode };
}

export const topics: readonly Topic[] = ['tail.wake', 'tail.interest', 'token.revoked', 'org.changed', 'monitors.changed'];
