import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

/**
 * The events engine's write-ahead log: append-only segment files of checksummed records, each
 * one caller's batch of events. Engine-neutral: a record body is opaque bytes here, and the
 * loader of any engine (DuckDB today) reads the records back in order.
 *
 * Record layout (little endian):
 *   magic u32 | bodyLength u32 | firstSeq f64 | count u32 | crc32 u32 | body
 * The crc covers the 20 header bytes before it and the body, so a torn or garbage tail fails
 * it. `firstSeq` numbers the record's events: firstSeq .. firstSeq + count - 1. Seqs are
 * contiguous across records and segments; a segment is named by its first record's seq.
 *
 * Group commit: appends that arrive while a write is in flight go together into the next
 * write, made durable with one fdatasync; each caller is answered after that sync.
 */

const magic = 0x4c415745; // "EWAL"
export const recordHeaderBytes = 24;
const segmentSuffix = '.wal';

export interface WalPosition {
  /** Seq of the last durable event (0 when none yet). */
  lastSeq: number;
  /** The segment being written and its durable length: readers stop there. */
  segment: string;
  bytes: number;
}

export interface AppendedRange {
  firstSeq: number;
  lastSeq: number;
}

interface Segment {
  name: string;
  firstSeq: number;
  /** Seq of its last record's last event (firstSeq - 1 while empty). */
  lastSeq: number;
}

interface Pending {
  body: Buffer;
  count: number;
  /** Runs synchronously once durable, in seq order, before any caller is answered. */
  durable?: (range: AppendedRange) => void;
  resolve: (range: AppendedRange) => void;
  reject: (error: unknown) => void;
}

export const segmentName = (firstSeq: number): string => `${String(firstSeq).padStart(16, '0')}${segmentSuffix}`;

/** Segment files of a directory, oldest first. */
export function listSegments(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(segmentSuffix))
    .sort();
}

export interface WalRecord {
  firstSeq: number;
  count: number;
  body: Buffer;
  /** Byte offset just past this record in its segment. */
  end: number;
}

/**
 * Parses the whole records in `bytes` (a slice of a segment starting at a record boundary,
 * `offset` into the file). Stops at the first record that is incomplete, fails its checksum or
 * does not continue the seqs of the one before (the first one: `nextSeq`, when given):
 * `valid` is the byte length of the good prefix.
 */
export function parseRecords(bytes: Buffer, offset = 0, nextSeq?: number): { records: WalRecord[]; valid: number } {
  const records: WalRecord[] = [];
  let at = 0;
  while (at + recordHeaderBytes <= bytes.length) {
    if (bytes.readUInt32LE(at) !== magic) break;
    const length = bytes.readUInt32LE(at + 4);
    const end = at + recordHeaderBytes + length;
    if (end > bytes.length) break;
    const crc = zlib.crc32(bytes.subarray(at + recordHeaderBytes, end), zlib.crc32(bytes.subarray(at, at + 20)));
    if (crc !== bytes.readUInt32LE(at + 20)) break;
    // Seqs run on without a gap: a whole record replayed from elsewhere (a stale sector) stops it too.
    const previous = records[records.length - 1];
    const expected = previous ? previous.firstSeq + previous.count : nextSeq;
    if (expected !== undefined && bytes.readDoubleLE(at + 8) !== expected) break;
    records.push({ firstSeq: bytes.readDoubleLE(at + 8), count: bytes.readUInt32LE(at + 16), body: bytes.subarray(at + recordHeaderBytes, end), end: offset + end });
    at = end;
  }
  return { records, valid: at };
}

/** Bytes of a segment read at a time when the log is opened (a longer record is read whole on its own). */
export const checkWindowBytes = 1 << 20;

export interface SegmentCheck {
  /** Seqs of the segment's first and last whole events; undefined when it holds no whole record. */
  firstSeq?: number;
  lastSeq?: number;
  /** Length of the good prefix: every byte past it is a torn tail or damage. */
  valid: number;
  size: number;
}

/**
 * Checks a segment's records (length, CRC, seq continuity, as `parseRecords`) reading it through
 * one buffer of `window` bytes: opening a log with a backlog of 64 MiB segments holds one window,
 * where reading each segment whole held them all until the main thread's next GC (102 MB seen).
 */
export function checkSegment(file: string, window = checkWindowBytes): SegmentCheck {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    let buffer = Buffer.allocUnsafe(Math.max(recordHeaderBytes, Math.min(window, size)));
    let at = 0;
    let firstSeq: number | undefined;
    let nextSeq: number | undefined;
    while (at < size) {
      const length = Math.min(buffer.length, size - at);
      readFully(fd, buffer, length, at);
      const { records, valid } = parseRecords(buffer.subarray(0, length), at, nextSeq);
      const last = records[records.length - 1];
      if (last) {
        firstSeq ??= records[0]!.firstSeq;
        nextSeq = last.firstSeq + last.count;
      }
      at += valid;
      if (valid > 0) continue;
      // No whole record at `at`. When the window held the rest of the file, it is a torn tail
      // or damage; when the window cut it, a record longer than the window is read whole, unless
      // its header is bad or it runs past the end of the file.
      if (at + length === size || buffer.readUInt32LE(0) !== magic) break;
      const recordLength = recordHeaderBytes + buffer.readUInt32LE(4);
      if (recordLength <= length || at + recordLength > size) break;
      buffer = Buffer.allocUnsafe(recordLength);
    }
    return { firstSeq, lastSeq: nextSeq === undefined ? undefined : nextSeq - 1, valid: at, size };
  } finally {
    fs.closeSync(fd);
  }
}

function readFully(fd: number, buffer: Buffer, length: number, position: number): void {
  for (let done = 0; done < length; ) {
    const n = fs.readSync(fd, buffer, done, length - done, position + done);
    if (n === 0) throw new Error('event log segment shrank while it was read');
    done += n;
  }
}

/** The header of a record (exported for the framing's property test). */
export function header(body: Buffer, firstSeq: number, count: number): Buffer {
  const h = Buffer.allocUnsafe(recordHeaderBytes);
  h.writeUInt32LE(magic, 0);
  h.writeUInt32LE(body.length, 4);
  h.writeDoubleLE(firstSeq, 8);
  h.writeUInt32LE(count, 16);
  h.writeUInt32LE(zlib.crc32(body, zlib.crc32(h.subarray(0, 20))), 20);
  return h;
}

export interface WalOptions {
  dir: string;
  /** A segment is closed and a new one started once it passes this size. */
  segmentBytes: number;
  /** Seq of the last event the engine holds already (the loader's position): the next is this + 1. */
  loadedSeq: number;
  /** Bytes read at a time when the segments are checked at open (`checkWindowBytes`; tests make it small). */
  checkWindowBytes?: number;
}

export interface WalRecovery {
  /** Bytes cut from the end of the last segment (a torn or garbage tail), 0 when it was whole. */
  cutBytes: number;
  /** Events in the log (not necessarily loaded yet). */
  lastSeq: number;
}

export class WriteAheadLog {
  private queue: Pending[] = [];
  private writing: Promise<void> | undefined;
  private fd: number;
  private bytes: number;
  private closed = false;
  private readonly segments: Segment[];
  /** Told after every durable write (the loader reads up to here). */
  onDurable: (position: WalPosition) => void = () => {};

  private constructor(
    private readonly options: WalOptions,
    segments: Segment[],
    fd: number,
    bytes: number,
    private nextSeq: number,
  ) {
    this.segments = segments;
    this.fd = fd;
    this.bytes = bytes;
  }

  /**
   * Opens the log: checks every segment's records, cuts a torn tail off the last one (a crash
   * mid-write: those events were never acknowledged), and starts a fresh segment to write.
   * Damage anywhere else is refused: those records were acknowledged.
   */
  static open(options: WalOptions): { wal: WriteAheadLog; recovery: WalRecovery } {
    fs.mkdirSync(options.dir, { recursive: true });
    const names = listSegments(options.dir);
    const segments: Segment[] = [];
    let cutBytes = 0;
    let lastSeq = options.loadedSeq;
    names.forEach((name, i) => {
      const file = path.join(options.dir, name);
      const check = checkSegment(file, options.checkWindowBytes);
      if (check.valid < check.size) {
        if (i < names.length - 1) {
          throw new Error(`event log segment ${file} is damaged at byte ${check.valid} (not its tail); restore it or move it away to start without those events`);
        }
        fs.truncateSync(file, check.valid);
        cutBytes = check.size - check.valid;
      }
      const first = check.firstSeq ?? Number(name.slice(0, 16));
      const last = check.lastSeq ?? first - 1;
      segments.push({ name, firstSeq: first, lastSeq: last });
      lastSeq = Math.max(lastSeq, last);
    });
    // A fresh segment per start: the segments before it are immutable from now on.
    const nextSeq = lastSeq + 1;
    const name = segmentName(nextSeq);
    const existing = segments.find((s) => s.name === name);
    let fd: number;
    if (existing && existing.lastSeq < existing.firstSeq) {
      fd = fs.openSync(path.join(options.dir, name), 'a');
    } else {
      fd = fs.openSync(path.join(options.dir, name), 'wx');
      segments.push({ name, firstSeq: nextSeq, lastSeq: nextSeq - 1 });
      syncDir(options.dir);
    }
    const wal = new WriteAheadLog(options, segments, fd, 0, nextSeq);
    return { wal, recovery: { cutBytes, lastSeq } };
  }

  /** The last durable position. */
  get position(): WalPosition {
    return { lastSeq: this.nextSeq - 1, segment: this.active.name, bytes: this.bytes };
  }

  private get active(): Segment {
    return this.segments[this.segments.length - 1]!;
  }

  /**
   * Appends one record of `count` events; resolves with their seqs once durable. `durable`
   * runs synchronously at that moment, records in seq order (live tail's feed).
   */
  append(body: Buffer, count: number, durable?: (range: AppendedRange) => void): Promise<AppendedRange> {
    if (this.closed) return Promise.reject(new Error('the event log is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ body, count, durable, resolve, reject });
      if (!this.writing) this.writing = this.writeLoop();
    });
  }

  private async writeLoop(): Promise<void> {
    try {
      while (this.queue.length) {
        const batch = this.queue;
        this.queue = [];
        await this.write(batch);
      }
    } finally {
      this.writing = undefined;
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    const buffers: Buffer[] = [];
    const ranges: AppendedRange[] = [];
    let seq = this.nextSeq;
    let size = 0;
    for (const p of batch) {
      buffers.push(header(p.body, seq, p.count), p.body);
      ranges.push({ firstSeq: seq, lastSeq: seq + p.count - 1 });
      size += recordHeaderBytes + p.body.length;
      seq += p.count;
    }
    try {
      if (this.bytes > 0 && this.bytes + size > this.options.segmentBytes) this.roll();
      await writeAll(this.fd, buffers, this.bytes);
      await fdatasync(this.fd);
    } catch (error) {
      // Nothing of this batch is acknowledged; the bytes written past `bytes` are cut so the
      // next write starts on a record boundary (and a restart would cut them anyway).
      try {
        fs.ftruncateSync(this.fd, this.bytes);
      } catch {
        // the next write fails the same way, or the restart cuts the tail
      }
      for (const p of batch) p.reject(error);
      return;
    }
    this.nextSeq = seq;
    this.bytes += size;
    this.active.lastSeq = seq - 1;
    batch.forEach((p, i) => p.durable?.(ranges[i]!));
    this.onDurable(this.position);
    batch.forEach((p, i) => p.resolve(ranges[i]!));
  }

  /** Closes the active segment (durable already) and starts the next. */
  private roll(): void {
    const name = segmentName(this.nextSeq);
    const fd = fs.openSync(path.join(this.options.dir, name), 'wx');
    syncDir(this.options.dir);
    fs.closeSync(this.fd);
    this.fd = fd;
    this.bytes = 0;
    this.segments.push({ name, firstSeq: this.nextSeq, lastSeq: this.nextSeq - 1 });
  }

  /**
   * Deletes the segments whose events are all loaded; the one being written only once the log
   * is closed (a clean stop that loaded everything leaves no file).
   */
  release(loadedSeq: number): void {
    const keep = this.closed ? 0 : 1;
    while (this.segments.length > keep && this.segments[0]!.lastSeq <= loadedSeq) {
      const segment = this.segments.shift()!;
      fs.rmSync(path.join(this.options.dir, segment.name), { force: true });
    }
  }

  /** Segment files on disk and their bytes (for /readyz and the bench). */
  get segmentCount(): number {
    return this.segments.length;
  }

  /** Waits for the writes in flight, then refuses new ones and closes the file. */
  async close(): Promise<void> {
    while (this.writing) await this.writing;
    this.closed = true;
    fs.closeSync(this.fd);
  }
}

function syncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function writeAll(fd: number, buffers: Buffer[], position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const total = buffers.reduce((n, b) => n + b.length, 0);
    fs.writev(fd, buffers, position, (error, written) => {
      if (error) return reject(error);
      if (written === total) return resolve();
      // A short write (rare: disk full races): write the rest from one buffer.
      const rest = Buffer.concat(buffers).subarray(written);
      fs.write(fd, rest, 0, rest.length, position + written, (e2, w2) => (e2 ? reject(e2) : w2 === rest.length ? resolve() : reject(new Error('short write to the event log'))));
    });
  });
}

function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}
