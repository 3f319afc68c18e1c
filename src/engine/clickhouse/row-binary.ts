/**
 * ClickHouse's RowBinary input format, written directly into one growing buffer: the loader's
 * INSERTs are length-prefixed bytes ClickHouse copies instead of JSON it parses (a payload
 * flattened into thousands of nodes made JSONEachRow the slowest part of a load), and the text
 * fields of the log's records go in as the bytes they already are, without decoding them.
 *
 * Layout (https://clickhouse.com/docs/en/interfaces/formats#rowbinary): integers and floats
 * little-endian; String as a LEB128 length and its bytes; Nullable as a 0/1 byte then the
 * value; Array as a LEB128 count then its elements. Unchanged since ClickHouse 1.x.
 */
export class RowBinaryWriter {
  private buffer: Buffer;
  private at = 0;

  constructor(initialBytes = 1 << 20) {
    this.buffer = Buffer.allocUnsafe(initialBytes);
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.at + bytes) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }

  private leb128(n: number): void {
    this.room(10);
    while (n >= 0x80) {
      this.buffer[this.at++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buffer[this.at++] = n;
  }

  uint8(n: number): void {
    this.room(1);
    this.buffer[this.at++] = n;
  }

  int32(n: number): void {
    this.room(4);
    this.at = this.buffer.writeInt32LE(n, this.at);
  }

  uint32(n: number): void {
    this.room(4);
    this.at = this.buffer.writeUInt32LE(n, this.at);
  }

  /** Int64 / UInt64 of a safe integer (epoch ms, seq). */
  int64(n: number): void {
    this.room(8);
    this.at = this.buffer.writeBigInt64LE(BigInt(n), this.at);
  }

  float64(n: number): void {
    this.room(8);
    this.at = this.buffer.writeDoubleLE(n, this.at);
  }

  string(s: string): void {
    const bytes = Buffer.byteLength(s, 'utf8');
    this.leb128(bytes);
    this.room(bytes);
    this.at += this.buffer.write(s, this.at, 'utf8');
  }

  /** A String whose UTF-8 bytes are already at hand (a range of a log record). */
  bytes(source: Buffer, start: number, length: number): void {
    this.leb128(length);
    this.room(length);
    source.copy(this.buffer, this.at, start, start + length);
    this.at += length;
  }

  nullableBytes(source: Buffer, start: number, length: number): void {
    if (start < 0) return this.uint8(1);
    this.uint8(0);
    this.bytes(source, start, length);
  }

  stringArray(values: readonly string[]): void {
    this.leb128(values.length);
    for (const v of values) this.string(v);
  }

  uint8Array(values: readonly number[]): void {
    this.leb128(values.length);
    this.room(values.length);
    for (const v of values) this.buffer[this.at++] = v;
  }

  float64Array(values: readonly number[]): void {
    this.leb128(values.length);
    this.room(8 * values.length);
    for (const v of values) this.at = this.buffer.writeDoubleLE(v, this.at);
  }

  /** The bytes written so far (a view: valid until the next write). */
  get written(): Buffer {
    return this.buffer.subarray(0, this.at);
  }

  get length(): number {
    return this.at;
  }
}
