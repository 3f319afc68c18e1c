import { isUtf8 } from 'node:buffer';
import type { Mode, Tenant } from '../../tenancy/tenant.js';
import { isUuidAnyCase } from '../../shared/ids.js';
import { severities, type NewEvent } from '../../shared/event-record.js';

/**
 * The body of one write-ahead log record: one caller's events of one tenant, in a binary
 * layout written with one native utf8 write per string, and read by the loader without
 * turning the strings back into JavaScript strings (DuckDB takes the UTF-8 bytes as they are).
 * JSON text cost the event loop ~1.8 µs per event to write and the loader ~1.3 µs to parse.
 *
 *   u8 version (1) | u8 mode (0 live, 1 test) | u16 n + org id | u16 n + project id
 *   f64 ingestedAt (epoch ms) | u32 count
 *   per event:
 *     u8 n + dataset id | 36 bytes event id (canonical UUID text) | f64 ts | u8 severity
 *     u32 bytesRaw | 5 × (u32 n, 0xffffffff for null, + UTF-8): event, actor, source, message, payload
 *
 * The record header numbers the events: event i has seq firstSeq + i.
 */

const version = 1;
const nullLength = 0xffffffff;
/** Text fields in body order. */
export const batchTextFields = ['event', 'actor', 'source', 'message', 'payload'] as const;

/**
 * Buffer's own encoders, the methods Buffer#write calls once it has checked its arguments and
 * looked the encoding up: with seven strings per event, those checks cost the event loop more
 * than the encoding did (bench:ingest's profile). Offsets here are within the buffer's bound.
 */
interface BufferEncoders {
  utf8Write(text: string, offset: number): number;
}

export function encodeBatch(tenant: Tenant, ingestedAt: number, events: readonly NewEvent[]): Buffer {
  // UTF-8 needs at most 3 bytes per UTF-16 unit: allocate the bound, return what was written.
  let bound = 32 + 3 * (tenant.orgId.length + tenant.projectId.length);
  for (const e of events) {
    bound += 1 + 36 + 8 + 1 + 4 + 5 * 4 + 3 * (e.datasetId.length + e.event.length + (e.actor?.length ?? 0) + (e.source?.length ?? 0) + e.message.length + e.payload.length);
  }
  const buf = Buffer.allocUnsafe(bound);
  const raw = buf as unknown as BufferEncoders;
  let at = 0;
  buf[at++] = version;
  buf[at++] = tenant.mode === 'test' ? 1 : 0;
  at = writeShort(buf, at, tenant.orgId);
  at = writeShort(buf, at, tenant.projectId);
  at = buf.writeDoubleLE(ingestedAt, at);
  at = buf.writeUInt32LE(events.length, at);
  for (const e of events) {
    const n = writeLatin1(buf, at + 1, e.datasetId);
    buf[at] = n;
    at += 1 + n;
    writeLatin1(buf, at, e.eventId, 36);
    at += 36;
    at = buf.writeDoubleLE(e.ts, at);
    buf[at++] = e.severity;
    at = buf.writeUInt32LE(e.bytesRaw, at);
    at = writeText(buf, raw, at, e.event);
    at = writeText(buf, raw, at, e.actor);
    at = writeText(buf, raw, at, e.source);
    at = writeText(buf, raw, at, e.message);
    at = writeText(buf, raw, at, e.payload);
  }
  return buf.subarray(0, at);
}

function writeShort(buf: Buffer, at: number, text: string): number {
  const n = buf.write(text, at + 2, 'utf8');
  buf.writeUInt16LE(n, at);
  return at + 2 + n;
}

/**
 * Strings up to this long are copied by a loop here when ASCII: cheaper than a call into
 * C++, whose fixed cost (not the encoding) was most of the encoder's time.
 */
const shortText = 64;

/** The string's characters as bytes (each UTF-16 unit's low byte, as latin1 does); at most `max`. */
function writeLatin1(buf: Buffer, at: number, text: string, max = text.length): number {
  const n = Math.min(text.length, max);
  for (let k = 0; k < n; k++) buf[at + k] = text.charCodeAt(k);
  return n;
}

/** An ASCII string's bytes and their count; -1 (something written, to be overwritten) at the first other character. */
function writeAscii(buf: Buffer, at: number, text: string): number {
  const n = text.length;
  for (let k = 0; k < n; k++) {
    const c = text.charCodeAt(k);
    if (c > 127) return -1;
    buf[at + k] = c;
  }
  return n;
}

function writeText(buf: Buffer, raw: BufferEncoders, at: number, text: string | null): number {
  if (text === null) {
    buf.writeUInt32LE(nullLength, at);
    return at + 4;
  }
  let n = text.length <= shortText ? writeAscii(buf, at + 4, text) : -1;
  if (n < 0) n = raw.utf8Write(text, at + 4);
  buf.writeUInt32LE(n, at);
  return at + 4 + n;
}

/**
 * Reads a batch body one event at a time into its fields (no object per event). Text fields
 * are byte ranges of `body` (`textStart[k]`, `textLength[k]`, -1 for null); `text(k)` decodes one.
 */
export class BatchReader {
  readonly tenant: Tenant;
  readonly ingestedAt: number;
  readonly count: number;
  private at: number;
  private read = 0;
  datasetId = '';
  private datasetStart = -1;
  private datasetLength = 0;
  /** Offset of the event id's 36 ASCII bytes in `body`. */
  eventIdAt = 0;
  ts = 0;
  severity = 0;
  bytesRaw = 0;
  readonly textStart = new Int32Array(batchTextFields.length);
  readonly textLength = new Int32Array(batchTextFields.length);

  constructor(readonly body: Buffer) {
    if (body[0] !== version) throw new Error(`event log record of unknown version ${body[0]}`);
    const mode: Mode = body[1] === 1 ? 'test' : 'live';
    let at = 2;
    const org = body.readUInt16LE(at);
    const orgId = body.toString('utf8', at + 2, at + 2 + org);
    at += 2 + org;
    const project = body.readUInt16LE(at);
    const projectId = body.toString('utf8', at + 2, at + 2 + project);
    at += 2 + project;
    this.tenant = { orgId, projectId, mode };
    this.ingestedAt = body.readDoubleLE(at);
    this.count = body.readUInt32LE(at + 8);
    this.at = at + 12;
  }

  /** Moves to the next event; false past the last. */
  next(): boolean {
    if (this.read >= this.count) return false;
    this.read++;
    const body = this.body;
    let at = this.at;
    const n = body[at]!;
    // Consecutive events mostly share a dataset: decode its id only when the bytes change.
    if (n !== this.datasetLength || body.compare(body, this.datasetStart, this.datasetStart + n, at + 1, at + 1 + n) !== 0) {
      this.datasetId = body.toString('latin1', at + 1, at + 1 + n);
      this.datasetLength = n;
    }
    this.datasetStart = at + 1;
    at += 1 + n;
    this.eventIdAt = at;
    at += 36;
    this.ts = body.readDoubleLE(at);
    this.severity = body[at + 8]!;
    this.bytesRaw = body.readUInt32LE(at + 9);
    at += 13;
    for (let k = 0; k < batchTextFields.length; k++) {
      const len = body.readUInt32LE(at);
      at += 4;
      if (len === nullLength) {
        this.textStart[k] = -1;
        this.textLength[k] = -1;
      } else {
        this.textStart[k] = at;
        this.textLength[k] = len;
        at += len;
      }
    }
    this.at = at;
    return true;
  }

  get eventId(): string {
    return this.body.toString('latin1', this.eventIdAt, this.eventIdAt + 36);
  }

  text(k: number): string | null {
    const start = this.textStart[k]!;
    return start < 0 ? null : this.body.toString('utf8', start, start + this.textLength[k]!);
  }

  /** The current event's text fields decoded (null kept only where a field may be null). */
  texts(): { event: string; actor: string | null; source: string | null; message: string; payload: string } {
    return { event: this.text(0) ?? '', actor: this.text(1), source: this.text(2), message: this.text(3) ?? '', payload: this.text(4) ?? '{}' };
  }

  /** Offset past the last event read. */
  get offset(): number {
    return this.at;
  }
}

/** Text fields that may be null (actor, source); the others are always strings. */
const nullableText = new Set([1, 2]);

/**
 * Checks a batch body from outside this process (an API process's append to the events node)
 * before it goes into the log: a record the loader could not load (bytes past the end, a text
 * that is not UTF-8, an event id that is not a UUID) would stop loading for good. Throws with
 * what is wrong; returns the batch's tenant and event count.
 */
export function checkBatch(body: Buffer): { tenant: Tenant; count: number } {
  const fail = (what: string): never => {
    throw new Error(`malformed event batch: ${what}`);
  };
  let reader: BatchReader;
  try {
    reader = new BatchReader(body);
  } catch (error) {
    return fail((error as Error).message);
  }
  if (body[1]! > 1) fail('unknown mode');
  if (!Number.isFinite(reader.ingestedAt)) fail('ingestedAt is not a time');
  const { tenant } = reader;
  if (!tenant.orgId || !tenant.projectId || tenant.orgId.includes('\ufffd') || tenant.projectId.includes('\ufffd')) fail('tenant ids');
  for (let i = 0; i < reader.count; i++) {
    try {
      reader.next();
    } catch (error) {
      fail(`event ${i}: ${(error as Error).message}`);
    }
    if (reader.offset > body.length || reader.eventIdAt + 36 > body.length) fail(`event ${i} runs past the end`);
    if (!/^[\x21-\x7e]+$/.test(reader.datasetId)) fail(`event ${i}: dataset id`);
    if (!isUuidAnyCase(reader.eventId)) fail(`event ${i}: event id is not a UUID`);
    if (!Number.isFinite(reader.ts) || reader.severity >= severities.length) fail(`event ${i}: ts or severity`);
    for (let k = 0; k < batchTextFields.length; k++) {
      const start = reader.textStart[k]!;
      if (start < 0 ? !nullableText.has(k) : !isUtf8(body.subarray(start, start + reader.textLength[k]!))) fail(`event ${i}: ${batchTextFields[k]} is not UTF-8 text`);
    }
  }
  if (reader.offset !== body.length) fail('bytes after the last event');
  return { tenant, count: reader.count };
}

/** A batch read back into the events it was written from (the rare path that needs them as objects). */
export function decodeBatch(body: Buffer): { tenant: Tenant; ingestedAt: number; events: NewEvent[] } {
  const reader = new BatchReader(body);
  const events: NewEvent[] = [];
  while (reader.next()) {
    events.push({ datasetId: reader.datasetId, eventId: reader.eventId, clientEventId: false, ts: reader.ts, severity: reader.severity, bytesRaw: reader.bytesRaw, ...reader.texts() });
  }
  return { tenant: reader.tenant, ingestedAt: reader.ingestedAt, events };
}

/**
 * An append as it crosses to the events node: which events carry a client event id (one bit
 * each: those are de-duplicated before the log), then the batch body the log stores as it is.
 *   u32 flag bytes | flags (bit i: event i has a client id) | batch body
 */
export function frameAppend(tenant: Tenant, ingestedAt: number, events: readonly NewEvent[]): Buffer {
  const flagBytes = events.some((e) => e.clientEventId) ? Math.ceil(events.length / 8) : 0;
  const head = Buffer.alloc(4 + flagBytes);
  head.writeUInt32LE(flagBytes, 0);
  if (flagBytes) events.forEach((e, i) => e.clientEventId && (head[4 + (i >> 3)]! |= 1 << (i & 7)));
  return Buffer.concat([head, encodeBatch(tenant, ingestedAt, events)]);
}

/** frameAppend's bytes back: the checked body, and which events carry client ids (undefined: none). */
export function unframeAppend(frame: Buffer): { tenant: Tenant; count: number; body: Buffer; clientIds: ((i: number) => boolean) | undefined } {
  if (frame.length < 4) throw new Error('malformed event batch: too short');
  const flagBytes = frame.readUInt32LE(0);
  if (frame.length < 4 + flagBytes) throw new Error('malformed event batch: flags run past the end');
  const body = frame.subarray(4 + flagBytes);
  const { tenant, count } = checkBatch(body);
  if (flagBytes && flagBytes !== Math.ceil(count / 8)) throw new Error('malformed event batch: flags do not match the events');
  const flags = frame.subarray(4, 4 + flagBytes);
  return { tenant, count, body, clientIds: flagBytes ? (i) => (flags[i >> 3]! & (1 << (i & 7))) !== 0 : undefined };
}
