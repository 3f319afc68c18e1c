import { createRequire } from 'node:module';
import { BIGINT, DOUBLE, DuckDBDataChunk, INTEGER, UINTEGER, UTINYINT, UUID, VARCHAR, type DuckDBType } from '@duckdb/node-api';
import type * as Bindings from '@duckdb/node-bindings';
import { columnIndex, eventColumnList } from '../event-columns.js';
import type { BatchReader } from '../wal/event-batch.js';
import { extractHotValues, hotColumn, hotColumnsOf, hotColumnType, isPlainInteger, pointerPath, type HotLayout, type HotValues } from '../hot-columns.js';
import { Found, HotScanner } from '../hot-scan.js';

// The C API underneath @duckdb/node-api (its own dependency, resolved from it so the versions
// always match): writing a data chunk's vectors directly is ~10× cheaper than node-api's
// value-by-value setters, which convert and check every value.
const bindings = createRequire(import.meta.resolve('@duckdb/node-api'))('@duckdb/node-bindings') as typeof Bindings;

/** Rows per data chunk (DuckDB's vector size, 2,048). */
export const chunkRows: number = bindings.vector_size();

const typeOf: Record<string, DuckDBType> = { BIGINT, UINTEGER, VARCHAR, UUID, UTINYINT, INTEGER, DOUBLE };
/** Column types of `events`, in table order, from its one description (event-columns.ts). */
export const eventTypes: readonly DuckDBType[] = eventColumnList.map((c) => typeOf[c.sql]!);
/** Index of the first hot column: they follow the event's own, in the order they were added. */
const hotBase = eventColumnList.length;
const chunkTypes = new Map<string, DuckDBType[]>();
/** The chunk's types: the event's columns, then the store's hot columns (by name, in table order). */
function typesWith(hotColumns: readonly string[]): DuckDBType[] {
  const key = hotColumns.join(',');
  let types = chunkTypes.get(key);
  if (!types) chunkTypes.set(key, (types = [...eventTypes, ...hotColumns.map((name) => typeOf[hotColumnType(name)]!)]));
  return types;
}
/** A validity mask of a whole chunk, all NULL. */
const allNull = new Uint32Array(chunkRows / 32);

const col = columnIndex;

const two32 = 4294967296;

/** An int64 column; values are non-negative safe integers, written as two 32-bit words (little endian). */
class Int64Column {
  readonly words = new Uint32Array(chunkRows * 2);
  set(i: number, value: number): void {
    this.words[2 * i] = value >>> 0;
    this.words[2 * i + 1] = Math.floor(value / two32);
  }
}

/** A UUID column as DuckDB stores it: a hugeint (lower u64, upper i64) with the top bit flipped. */
class UuidColumn {
  readonly words = new Uint32Array(chunkRows * 4);
  /** `uuid` is a lower-case canonical UUID string (8-4-4-4-12). */
  set(i: number, uuid: string): void {
    const w = this.words;
    w[4 * i] = parseInt(uuid.slice(28, 36), 16);
    w[4 * i + 1] = parseInt(uuid.slice(19, 23) + uuid.slice(24, 28), 16);
    w[4 * i + 2] = parseInt(uuid.slice(9, 13) + uuid.slice(14, 18), 16);
    w[4 * i + 3] = (parseInt(uuid.slice(0, 8), 16) ^ 0x80000000) >>> 0;
  }

  /** The same from the 36 ASCII bytes of a canonical UUID at `at` (a log record's body). */
  setAscii(i: number, bytes: Uint8Array, at: number): void {
    const w = this.words;
    w[4 * i] = hexWord(bytes, at + 28, at + 36);
    w[4 * i + 1] = ((hexWord(bytes, at + 19, at + 23) << 16) | hexWord(bytes, at + 24, at + 28)) >>> 0;
    w[4 * i + 2] = ((hexWord(bytes, at + 9, at + 13) << 16) | hexWord(bytes, at + 14, at + 18)) >>> 0;
    w[4 * i + 3] = (hexWord(bytes, at, at + 8) ^ 0x80000000) >>> 0;
  }
}

/** The value of the lower-case hex digits bytes[from, to) (at most 8). */
function hexWord(bytes: Uint8Array, from: number, to: number): number {
  let value = 0;
  for (let k = from; k < to; k++) {
    const c = bytes[k]!;
    value = value * 16 + (c <= 57 ? c - 48 : c - 87);
  }
  return value;
}

/**
 * A VARCHAR column. Strings of at most 12 ASCII characters are written inline into DuckDB's
 * 16-byte string_t (length, then the bytes, zero padded) with the column's one bulk copy;
 * longer ones are handed to DuckDB one by one after it.
 */
class TextColumn {
  readonly data = new Uint8Array(chunkRows * 16);
  private readonly view = new DataView(this.data.buffer);
  readonly validity = new Uint32Array(chunkRows / 32).fill(0xffffffff);
  hasNull = false;
  readonly long: Array<string | Uint8Array | undefined> = new Array<string | Uint8Array | undefined>(chunkRows);
  longCount = 0;

  /** The UTF-8 bytes body[start, start + length) as row i's value; start < 0 is NULL. */
  setBytes(i: number, body: Uint8Array, start: number, length: number): void {
    if (start < 0) {
      this.validity[i >>> 5] = this.validity[i >>> 5]! & ~(1 << (i & 31));
      this.hasNull = true;
      return;
    }
    if (length <= 12) {
      const base = i * 16;
      this.view.setUint32(base, length, true);
      for (let k = 0; k < length; k++) this.data[base + 4 + k] = body[start + k]!;
      return;
    }
    this.long[i] = body.subarray(start, start + length);
    this.longCount++;
  }

  set(i: number, value: string | null): void {
    if (value === null) {
      this.validity[i >>> 5] = this.validity[i >>> 5]! & ~(1 << (i & 31));
      this.hasNull = true;
      return;
    }
    const n = value.length;
    if (n <= 12) {
      let ascii = true;
      for (let k = 0; k < n; k++) {
        if (value.charCodeAt(k) > 127) {
          ascii = false;
          break;
        }
      }
      if (ascii) {
        const base = i * 16;
        this.view.setUint32(base, n, true);
        for (let k = 0; k < n; k++) this.data[base + 4 + k] = value.charCodeAt(k);
        return;
      }
    }
    this.long[i] = value;
    this.longCount++;
  }

  write(vector: Bindings.Vector, rows: number): void {
    bindings.copy_data_to_vector(vector, 0, this.data.buffer, 0, rows * 16);
    if (this.hasNull) {
      bindings.vector_ensure_validity_writable(vector);
      bindings.copy_data_to_vector_validity(vector, 0, this.validity.buffer, 0, Math.ceil(rows / 64) * 8);
    }
    if (this.longCount) {
      for (let i = 0; i < rows; i++) {
        const s = this.long[i];
        if (s === undefined) continue;
        if (typeof s === 'string') bindings.vector_assign_string_element(vector, i, s);
        else bindings.vector_assign_string_element_len(vector, i, s);
      }
    }
  }
}

export interface ChunkRow {
  seq: number;
  eventId: string;
  ts: number;
  ingestedAt: number;
  severity: number;
  event: string;
  actor: string | null;
  source: string | null;
  message: string;
  payload: string;
  bytesRaw: number;
}

/**
 * Builds one data chunk of `events` rows of a single tenant and dataset (both constant
 * vectors) for the appender.
 */
export class EventChunkBuilder {
  private rows = 0;
  private readonly seq = new Int64Column();
  private readonly eventId = new UuidColumn();
  private readonly ts = new Int64Column();
  private readonly ingestedAt = new Int64Column();
  private readonly severity = new Uint8Array(chunkRows);
  private readonly text = [new TextColumn(), new TextColumn(), new TextColumn(), new TextColumn(), new TextColumn()];
  private readonly bytesRaw = new Int32Array(chunkRows);
  /** The hot columns of the dataset's layout (none: every hot column NULL). */
  private readonly hot: HotChunkColumns | undefined;

  /**
   * `hotColumns`: the hot columns `events` has (table order), all to be written; `layout`: the
   * dataset's hot keys, whose columns must be among them.
   */
  constructor(
    private readonly tenant: number,
    private readonly datasetId: string,
    layout?: HotLayout,
    private readonly hotColumns: readonly string[] = [],
  ) {
    if (layout?.slots.length) this.hot = new HotChunkColumns(layout, hotColumns);
  }

  get size(): number {
    return this.rows;
  }

  /**
   * What the chunk's rows add to the dataset's hot rows (DuckDbHotLayouts.noteRows): their
   * layout (0: none), the OR of their hot_json bits, the number columns holding a number that is
   * not an integer below 10^15.
   */
  get hotRows(): { datasetId: string; layout: number; json: number; oddNumbers: number } {
    return { datasetId: this.datasetId, layout: this.hot?.layoutId ?? 0, json: this.hot?.jsonBits ?? 0, oddNumbers: this.hot?.oddNumbers ?? 0 };
  }

  get full(): boolean {
    return this.rows === chunkRows;
  }

  add(r: ChunkRow): void {
    const i = this.rows++;
    this.seq.set(i, r.seq);
    this.eventId.set(i, r.eventId);
    this.ts.set(i, r.ts);
    this.ingestedAt.set(i, r.ingestedAt);
    this.severity[i] = r.severity;
    const [event, actor, source, message, payload] = this.text as [TextColumn, TextColumn, TextColumn, TextColumn, TextColumn];
    event.set(i, r.event);
    actor.set(i, r.actor);
    source.set(i, r.source);
    message.set(i, r.message);
    payload.set(i, r.payload);
    this.bytesRaw[i] = r.bytesRaw;
    if (this.hot) {
      // The loader's way (addEncoded): from the payload's UTF-8 bytes.
      const bytes = Buffer.from(r.payload, 'utf8');
      this.hot.addBytes(i, bytes, 0, bytes.length);
    }
  }

  /** The reader's current event (a log record's body), without decoding its text. */
  addEncoded(seq: number, r: BatchReader): void {
    const i = this.rows++;
    this.seq.set(i, seq);
    this.eventId.setAscii(i, r.body, r.eventIdAt);
    this.ts.set(i, r.ts);
    this.ingestedAt.set(i, r.ingestedAt);
    this.severity[i] = r.severity;
    for (let k = 0; k < 5; k++) this.text[k]!.setBytes(i, r.body, r.textStart[k]!, r.textLength[k]!);
    this.bytesRaw[i] = r.bytesRaw;
    // Only datasets with hot keys look into their payloads here.
    if (this.hot) this.hot.addBytes(i, r.body, r.textStart[4]!, r.textLength[4]!);
  }

  /** The chunk's column types (a chunk given to `build` must have them). */
  get types(): readonly DuckDBType[] {
    return typesWith(this.hotColumns);
  }

  /**
   * The rows as a DuckDB data chunk: a new one, or `into` (of `types`, just created or reset)
   * filled again.
   */
  build(into?: DuckDBDataChunk): DuckDBDataChunk {
    const n = this.rows;
    const chunk = into ?? DuckDBDataChunk.create(typesWith(this.hotColumns), n);
    if (into) into.rowCount = n;
    const vector = (column: number) => bindings.data_chunk_get_vector(chunk.chunk, column);
    const copy = (column: number, array: ArrayBufferView<ArrayBuffer>, bytesPerRow: number) =>
      bindings.copy_data_to_vector(vector(column), 0, array.buffer, array.byteOffset, n * bytesPerRow);
    copy(col.seq, this.seq.words, 8);
    bindings.vector_reference_value(vector(col.tenant), bindings.create_uint32(this.tenant));
    bindings.vector_reference_value(vector(col.dataset_id), bindings.create_varchar(this.datasetId));
    copy(col.event_id, this.eventId.words, 16);
    copy(col.ts, this.ts.words, 8);
    copy(col.ingested_at, this.ingestedAt.words, 8);
    copy(col.severity, this.severity, 1);
    const [event, actor, source, message, payload] = this.text as [TextColumn, TextColumn, TextColumn, TextColumn, TextColumn];
    event.write(vector(col.event), n);
    actor.write(vector(col.actor), n);
    source.write(vector(col.source), n);
    message.write(vector(col.message), n);
    payload.write(vector(col.payload), n);
    copy(col.bytes_raw, this.bytesRaw, 4);
    if (this.hot) this.hot.write(vector, n);
    else for (let c = 0; c < this.hotColumns.length; c++) setAllNull(vector(hotBase + c), n);
    return chunk;
  }
}

function setAllNull(vector: Bindings.Vector, rows: number): void {
  bindings.vector_ensure_validity_writable(vector);
  bindings.copy_data_to_vector_validity(vector, 0, allNull.buffer, 0, Math.ceil(rows / 64) * 8);
}

/**
 * Rows of the backfill's staging table (duckdb-hot-backfill.ts): each stored row's rowid and seq,
 * then the hot columns of the layout it is given (hotColumnsOf: hot_layout, hot_json, the
 * slots' columns), extracted from its payload exactly as the loader extracts them.
 */
export class HotBackfillChunk {
  private rows = 0;
  private readonly rowid = new Int64Column();
  private readonly seq = new Int64Column();
  private readonly hot: HotChunkColumns;
  /** The staging table's hot columns, in its order. */
  readonly columns: readonly string[];

  constructor(layout: HotLayout) {
    this.columns = hotColumnsOf(layout.slots);
    this.hot = new HotChunkColumns(layout, this.columns, 2);
  }

  get size(): number {
    return this.rows;
  }

  get full(): boolean {
    return this.rows === chunkRows;
  }

  /** The staging table's column types: rowid, seq, then `columns`. */
  get types(): DuckDBType[] {
    return [BIGINT, BIGINT, ...this.columns.map((name) => typeOf[hotColumnType(name)]!)];
  }

  /** What the rows add to the dataset's counts (DuckDbHotLayouts.noteRows). */
  get hotRows(): { json: number; oddNumbers: number } {
    return { json: this.hot.jsonBits, oddNumbers: this.hot.oddNumbers };
  }

  /** A stored row: its rowid, seq and payload text (null: none, read as `{}` as the loader reads it). */
  add(rowid: number, seq: number, payload: string | null): void {
    const i = this.rows++;
    this.rowid.set(i, rowid);
    this.seq.set(i, seq);
    if (payload === null) return this.hot.addBytes(i, Buffer.alloc(0), -1, 0);
    const bytes = Buffer.from(payload, 'utf8');
    this.hot.addBytes(i, bytes, 0, bytes.length);
  }

  build(): DuckDBDataChunk {
    const n = this.rows;
    const chunk = DuckDBDataChunk.create(this.types, n);
    const vector = (column: number) => bindings.data_chunk_get_vector(chunk.chunk, column);
    bindings.copy_data_to_vector(vector(0), 0, this.rowid.words.buffer, 0, n * 8);
    bindings.copy_data_to_vector(vector(1), 0, this.seq.words.buffer, 0, n * 8);
    this.hot.write(vector, n);
    return chunk;
  }
}

/**
 * The hot columns of one chunk of a dataset with hot keys (hot-columns.ts): the layout id
 * (constant), the row's JSON bits, and the values of the layout's slots; other slots NULL.
 */
class HotChunkColumns {
  private readonly paths: string[][];
  private readonly json = new Uint32Array(chunkRows);
  /** By slot. */
  private readonly strings = new Map<number, TextColumn>();
  private readonly numbers = new Map<number, { values: Float64Array<ArrayBuffer>; validity: Uint32Array<ArrayBuffer> }>();
  /** Vector index of each hot column of the table: a slot's, or null for the columns the layout leaves NULL. */
  private readonly at: Array<{ index: number; slot: number | null; name: string }>;
  private readonly row: HotValues = { strings: [], numbers: [], json: 0 };
  /** The OR of the rows' hot_json. */
  jsonBits = 0;
  /** Bit per number column (1 << column) holding a number that is not an integer below 10^15. */
  oddNumbers = 0;
  /** Per number slot, its column's bit in oddNumbers. */
  private readonly columnBit = new Map<number, number>();
  private readonly scanner: HotScanner;
  /** The columns by index in the layout's slots (the scanner's order). */
  private readonly stringAt: Array<TextColumn | undefined>;
  private readonly numberAt: Array<{ values: Float64Array<ArrayBuffer>; validity: Uint32Array<ArrayBuffer> } | undefined>;

  /** `hotColumns` are the chunk's vectors from `base` on (the hot columns of `events`, after the event's own columns). */
  constructor(
    private readonly layout: HotLayout,
    hotColumns: readonly string[],
    base: number = hotBase,
  ) {
    this.paths = layout.slots.map((s) => pointerPath(s.pointer));
    for (const s of layout.slots) {
      if (s.type === 'number') {
        this.numbers.set(s.slot, { values: new Float64Array(chunkRows), validity: new Uint32Array(chunkRows / 32).fill(0xffffffff) });
        this.columnBit.set(s.slot, (1 << s.column) >>> 0);
      } else this.strings.set(s.slot, new TextColumn());
    }
    this.at = hotColumns.map((name, i) => ({ index: base + i, name, slot: layout.slots.find((s) => hotColumn(s) === name)?.slot ?? null }));
    for (const s of layout.slots) {
      if (!hotColumns.includes(hotColumn(s))) throw new Error(`hot column ${hotColumn(s)} is not in events`);
    }
    this.scanner = new HotScanner(layout.slots);
    this.stringAt = layout.slots.map((s) => this.strings.get(s.slot));
    this.numberAt = layout.slots.map((s) => this.numbers.get(s.slot));
  }

  get layoutId(): number {
    return this.layout.id;
  }

  /**
   * Row i's values from its payload's UTF-8 bytes body[from, from + length) (from < 0: no
   * payload, read as `{}`): scanned for the hot keys only (hot-scan.ts), or, when the text is not
   * plain, decoded and parsed (`add`, the reference).
   */
  addBytes(i: number, body: Buffer, from: number, length: number): void {
    const scan = this.scanner;
    if (from < 0 || !scan.scan(body, from, from + length)) {
      this.add(i, from < 0 ? '{}' : body.toString('utf8', from, from + length));
      return;
    }
    const slots = this.layout.slots;
    let json = 0;
    for (let j = 0; j < slots.length; j++) {
      const s = slots[j]!;
      const found = scan.found[j]!;
      const number = this.numberAt[j];
      if (number) {
        const v = scan.numbers[j]!;
        if (found === Found.Number && Number.isFinite(v)) {
          number.values[i] = v;
          if (!isPlainInteger(v)) this.oddNumbers = (this.oddNumbers | this.columnBit.get(s.slot)!) >>> 0;
          continue;
        }
        number.validity[i >>> 5] = number.validity[i >>> 5]! & ~(1 << (i & 31));
      } else {
        const column = this.stringAt[j]!;
        if (s.type === 'string') {
          if (found === Found.Bytes) {
            column.setBytes(i, body, scan.start[j]!, scan.length[j]!);
            continue;
          }
          const text = scan.text[j];
          if (found === Found.Text && text !== undefined && !text.includes('\u0000')) {
            column.set(i, text);
            continue;
          }
        } else if (found === Found.True || found === Found.False) {
          column.set(i, found === Found.True ? 'true' : 'false');
          continue;
        }
        column.set(i, null);
      }
      if (found !== Found.Missing) json = (json | (1 << s.slot)) >>> 0;
    }
    this.json[i] = json;
    this.jsonBits = (this.jsonBits | json) >>> 0;
  }

  /** Row i's values from its payload's JSON text: decoded into an object (extractHotValues, the reference). */
  add(i: number, payloadJson: string): void {
    const row = this.row;
    extractHotValues(this.layout.slots, this.paths, payloadJson, row);
    this.json[i] = row.json;
    this.jsonBits = (this.jsonBits | row.json) >>> 0;
    for (const [slot, column] of this.strings) column.set(i, row.strings[slot] ?? null);
    for (const [slot, column] of this.numbers) {
      const v = row.numbers[slot];
      if (v === null || v === undefined) column.validity[i >>> 5] = column.validity[i >>> 5]! & ~(1 << (i & 31));
      else {
        column.values[i] = v;
        if (!isPlainInteger(v)) this.oddNumbers = (this.oddNumbers | this.columnBit.get(slot)!) >>> 0;
      }
    }
  }

  write(vector: (column: number) => Bindings.Vector, n: number): void {
    for (const { index, name, slot } of this.at) {
      const v = vector(index);
      if (name === 'hot_layout') bindings.vector_reference_value(v, bindings.create_uint32(this.layout.id));
      else if (name === 'hot_json') bindings.copy_data_to_vector(v, 0, this.json.buffer, 0, n * 4);
      else if (slot === null) setAllNull(v, n);
      else if (this.strings.has(slot)) this.strings.get(slot)!.write(v, n);
      else {
        const number = this.numbers.get(slot)!;
        bindings.copy_data_to_vector(v, 0, number.values.buffer, 0, n * 8);
        bindings.vector_ensure_validity_writable(v);
        bindings.copy_data_to_vector_validity(v, 0, number.validity.buffer, 0, Math.ceil(n / 64) * 8);
      }
    }
  }
}
