import { v7 as uuidv7 } from 'uuid';
import type { AppContext } from '../app/context.js';
import type { AuthContext } from '../auth/auth-context.js';
import { badRequest, tooLarge } from '../errors/app-error.js';
import { iso } from '../shared/clock.js';
import type { Tenant } from '../tenancy/tenant.js';
import { severities, type Severity, type StoredEvent } from '../shared/event-record.js';
import type { CompiledFilter, EventKey, NewEvent } from '../engine/event-store.js';
import { defaultDatasetName } from '../events/dataset-service.js';
import { ingestLimits, payloadShapeProblem } from '../ingest/core/limits.js';
import { withoutLoneSurrogates } from '../ingest/core/normalise.js';
import type { EventsRuntime } from '../events/runtime.js';
import { storeToTargets, type TargetOf } from '../ingest/core/store-events.js';
import { eventIdOf, logIdOf } from './log-id.js';

/** The dataset log entries are stored in (DECISIONS.md §9, last point). */
export const logsDataset = 'logs';

export interface LogEntry {
  id: string;
  level: Severity;
  message: string;
  meta: Record<string, unknown>;
  created_at: string;
}

export interface LogFilter {
  level?: Severity;
  /** epoch ms, inclusive */
  from?: number;
  /** epoch ms, exclusive */
  to?: number;
}

/** Log entries as a view over the events of the dataset `logs`. */
export class LogsService {
  constructor(
    private readonly ctx: AppContext,
    private readonly events: EventsRuntime,
  ) {}

  /**
   * Stores one entry as an event, by the path ingest takes (POST /datasets/logs/ingest): the
   * dataset is created with the first entry stored, never by a refused one (or the entry
   * overflows into `default` at the plan's dataset cap), `events_month` is consumed (402 when
   * used up) and given back if the append fails, and the answer waits until the event is
   * durable. Live tail is told.
   */
  /** `onAppendError` hears a failed append or a failing live-tail wake-up (the caller logs them). */
  async create(auth: AuthContext, level: Severity, message: string, meta: Record<string, unknown>, onAppendError: (error: unknown) => void = () => {}): Promise<LogEntry> {
    const now = this.ctx.clock.now();
    const eventId = uuidv7({ msecs: now });
    const build = (targetOf: TargetOf) => {
      const target = targetOf(logsDataset);
      // The bounds of an ingested payload (depth, keys): checked before anything serialises meta.
      const problem = payloadShapeProblem(meta, 'meta');
      if (problem) throw badRequest(problem);
      const payload = target.overflowFrom !== undefined ? { ...meta, _dataset: target.overflowFrom } : meta;
      const body = JSON.stringify({ message, payload });
      const bytes = Buffer.byteLength(body);
      if (bytes > ingestLimits.eventBytes) throw tooLarge(ingestLimits.eventBytes, `a log entry may be at most ${ingestLimits.eventBytes} bytes (message and meta as JSON)`);
      const event: NewEvent = {
        datasetId: target.dataset.id,
        eventId,
        clientEventId: false,
        ts: now,
        severity: severities.indexOf(level),
        bytesRaw: bytes,
        event: '',
        actor: null,
        source: null,
        message,
        payload: withoutLoneSurrogates(JSON.stringify(payload)),
      };
      return { events: [event] };
    };
    await storeToTargets(this.ctx, this.events, auth, [logsDataset], build, onAppendError);
    return { id: logIdOf(eventId), level, message, meta, created_at: iso(now) };
  }

  /** One page, newest first; `next` is set when more entries follow. */
  async list(tenant: Tenant, filter: LogFilter, limit: number, after: EventKey | undefined): Promise<{ entries: LogEntry[]; next: EventKey | undefined }> {
    const base = await this.datasetFilter(tenant);
    if (!base) return { entries: [], next: undefined };
    const where = [`(${base.where})`];
    const params = [...base.params];
    if (filter.level !== undefined) {
      where.push('severity = ?');
      params.push(severities.indexOf(filter.level));
    }
    if (filter.from !== undefined) {
      where.push('ts >= ?');
      params.push(filter.from);
    }
    if (filter.to !== undefined) {
      where.push('ts < ?');
      params.push(filter.to);
    }
    const page = await this.events.store.query(tenant, { filter: { where: where.join(' AND '), params }, limit, after });
    return { entries: page.events.map(toEntry), next: page.next };
  }

  async get(tenant: Tenant, id: string): Promise<LogEntry | undefined> {
    const eventId = eventIdOf(id);
    if (!eventId) return undefined;
    const base = await this.datasetFilter(tenant);
    if (!base) return undefined;
    const page = await this.events.store.query(tenant, { filter: { where: `(${base.where}) AND event_id = ?::UUID`, params: [...base.params, eventId] }, limit: 1 });
    const event = page.events[0];
    return event ? toEntry(event) : undefined;
  }

  /**
   * Events that are log entries: those of the active dataset `logs`, and those that
   * overflowed into `default` at the dataset cap (payload._dataset = 'logs').
   * Undefined when there are none.
   */
  private async datasetFilter(tenant: Tenant): Promise<CompiledFilter | undefined> {
    const { datasets } = this.events;
    const [logs, fallback] = await Promise.all([datasets.find(tenant, logsDataset), datasets.find(tenant, defaultDatasetName)]);
    const parts: string[] = [];
    const params: string[] = [];
    if (logs && !logs.archived_at) {
      parts.push('dataset_id = ?');
      params.push(logs.id);
    }
    if (fallback && !fallback.archived_at) {
      parts.push(`(dataset_id = ? AND json_extract_string(payload, '$._dataset') = ?)`);
      params.push(fallback.id, logsDataset);
    }
    return parts.length ? { where: parts.join(' OR '), params } : undefined;
  }
}

function toEntry(event: StoredEvent): LogEntry {
  let meta = JSON.parse(event.payloadJson) as Record<string, unknown>;
  if (event.dataset !== logsDataset) {
    // Overflowed into `default`: the marker ingest added is not part of what was sent.
    const { _dataset: _marker, ...rest } = meta;
    meta = rest;
  }
  return {
    id: logIdOf(event.event_id),
    level: severities[event.severity] ?? 'info',
    message: event.message,
    meta,
    created_at: iso(event.ts),
  };
}
