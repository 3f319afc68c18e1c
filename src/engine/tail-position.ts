/**
 * Where a live-tail reader stands: per write-ahead log, the seq of the last event it
 * has looked at. The embedded engine (and an events node) has one log, named '', and a position
 * is one seq, as before. On ClickHouse every API process ingests through a log of its own and
 * seqs number one log's events only: a position holds one seq per log, and `since` says from
 * which ingest time the events of a log it does not know yet count (a host that starts, or
 * writes for this tenant for the first time, after the position was taken).
 *
 * Exact without clocks agreeing: each log's events reach the engine in seq order (the loader
 * loads in order; on ClickHouse an ingest is answered after its INSERT), so "seq > position of
 * its log" never skips or repeats an event. Only a log the position does not know is read by
 * time, from `since` (taken a minute before the session's start: a host whose clock is behind by
 * less than that loses nothing).
 *
 * As an SSE `id` (what `Last-Event-ID` resumes from): the seq alone for the single log, as
 * before; else `since~log.seq~log.seq…` (log ids are 16 hex digits, '' for a log from before
 * log ids), at most `maxLogs` logs.
 */
export interface TailPosition {
  /** Per log id, the last seq looked at. */
  readonly logs: Readonly<Record<string, number>>;
  /** Events of logs missing from `logs` count from this ingested_at (epoch ms) on; 0 with one log. */
  readonly since: number;
}

/** What a position needs of an event. */
export interface TailEvent {
  seq: number;
  ingested_at: number;
  /** The log that acknowledged it; undefined: the single log (''). */
  log?: string;
}

/** Logs one position may name: far more API processes than an installation runs at once. */
export const maxLogs = 256;

const logIdPattern = /^(?:[0-9a-f]{16})?$/;

/** The position of the single log, after `seq`. */
export const singleLog = (seq: number): TailPosition => ({ logs: { '': seq }, since: 0 });

/** The single log's seq, when the position is only that (the embedded engine, an events node). */
export function singleSeq(position: TailPosition): number | undefined {
  const keys = Object.keys(position.logs);
  if (position.since !== 0 || keys.length !== 1 || keys[0] !== '') return undefined;
  return position.logs['']!;
}

/** True when the reader at `position` has looked at `event` already (or it is older than what it waits for). */
export function covers(position: TailPosition, event: TailEvent): boolean {
  const last = position.logs[event.log ?? ''];
  return last !== undefined ? event.seq <= last : event.ingested_at < position.since;
}

/** A copy that can be moved on in place (a session's own cursor). */
export const copyPosition = (position: TailPosition): { logs: Record<string, number>; since: number } => ({ logs: { ...position.logs }, since: position.since });

/** Moves a position past `event`, in place. */
export function advance(position: { logs: Record<string, number> }, event: TailEvent): void {
  const log = event.log ?? '';
  const last = position.logs[log];
  if (last === undefined || event.seq > last) position.logs[log] = event.seq;
}

/** A new position past every one of `events`. */
export function advanced(position: TailPosition, events: readonly TailEvent[]): TailPosition {
  const next = copyPosition(position);
  for (const event of events) advance(next, event);
  return next;
}

/**
 * True when a reader at `a` has looked at everything a reader at `b` has: for every log, at or
 * past b's seq, and waiting for unknown logs from no earlier (so joining b's feed, which reads
 * from b, loses nothing a's own reads would have given).
 */
export function reaches(a: TailPosition, b: TailPosition): boolean {
  if (a.since < b.since) return false;
  for (const [log, seq] of Object.entries(b.logs)) {
    const own = a.logs[log];
    if (own === undefined ? seq > 0 : own < seq) return false;
  }
  return true;
}

/**
 * A client's resume position held to the store's end. The single log (the embedded engine, an
 * events node): a seq past the log's last cannot be one of its events, so the session starts
 * from the end rather than wait for it, and a position that does not name the log starts there
 * too. Many logs (ClickHouse): kept as it is. A host hands its own events to its sessions as
 * soon as they are durable (src/tail/relay.ts), before another host's tail start can see them
 * in ClickHouse, so a seq past what this host sees of a log is an ordinary resume there: lowered,
 * it would repeat those events. A seq no log will reach only holds back that log's events for
 * the client that sent it.
 */
export function clampTo(resume: TailPosition, end: TailPosition): TailPosition {
  const logs: Record<string, number> = { ...resume.logs };
  const last = singleSeq(end);
  if (last !== undefined) logs[''] = Math.min(logs[''] ?? last, last);
  return { logs, since: resume.since };
}

/** The SSE id of a position. */
export function encodePosition(position: TailPosition): string {
  const single = singleSeq(position);
  if (single !== undefined) return String(single);
  let text = String(position.since);
  for (const [log, seq] of Object.entries(position.logs)) text += `~${log}.${seq}`;
  return text;
}

/** A `Last-Event-ID` back to a position; undefined when it is not one this service writes. */
export function parsePosition(text: string): TailPosition | undefined {
  const trimmed = text.trim();
  if (/^\d{1,15}$/.test(trimmed)) return singleLog(Number(trimmed));
  const parts = trimmed.split('~');
  if (parts.length < 2 || parts.length > maxLogs + 1 || !/^\d{1,15}$/.test(parts[0]!)) return undefined;
  const logs: Record<string, number> = {};
  for (const part of parts.slice(1)) {
    const dot = part.indexOf('.');
    const log = part.slice(0, dot);
    const seq = part.slice(dot + 1);
    if (dot < 0 || !logIdPattern.test(log) || !/^\d{1,15}$/.test(seq) || Object.hasOwn(logs, log)) return undefined;
    logs[log] = Number(seq);
  }
  return { logs, since: Number(parts[0]) };
}
