/**
 * The hot keys' values read straight from a payload's UTF-8 bytes, for the loader:
 * decoding each payload and `JSON.parse`-ing it into an object only to take a few values was
 * most of what hot keys cost the loader's thread. The scan
 * walks the text once, validating all of it as JSON.parse would, and descends only into the
 * objects on a hot key's path; an ASCII string without escapes is answered as its byte range (no
 * JavaScript string is made).
 *
 * It never decides anything unusual: whenever the text is not plain (a syntax error, an escape
 * in a key on a hot path, an escaped surrogate anywhere — payload-text.ts —, a hot key twice in
 * one object, nesting past 64, a top level that is not an object) `scan` answers false and the
 * caller takes extractHotValues (hot-columns.ts), whose answer is the reference: the hot columns
 * are the same either way (held by hot-scan.test.ts and soql-hot-agreement.test.ts).
 */
import type { HotSlot } from './hot-columns.js';
import { pointerPath } from './hot-columns.js';

/** What a scan found for a slot (by index in the layout's slots). */
export const Found = {
  Missing: 0,
  /** An ASCII string without escapes: bytes [start, start + length) of the body. */
  Bytes: 1,
  /** Any other string, decoded: `text`. */
  Text: 2,
  Number: 3,
  True: 4,
  False: 5,
  /** null, an object, an array, or a path through an array: the JSON decides (the slot's bit). */
  Other: 6,
} as const;

interface Entry {
  key: Uint8Array;
  /** The slot index whose path ends here, or -1. */
  slot: number;
  /** The keys below, when some slot's path goes on. */
  child: Entry[] | undefined;
  /** The slot indexes whose paths go on below this key (they go through an array if its value is one). */
  below: number[];
}

const maxDepth = 64;
const quote = 0x22;
const backslash = 0x5c;

export class HotScanner {
  readonly found: Uint8Array;
  readonly start: Int32Array;
  readonly length: Int32Array;
  readonly numbers: Float64Array;
  readonly text: Array<string | undefined>;
  /** False when some key cannot be compared as bytes (a lone surrogate): every scan answers false. */
  private readonly usable: boolean;
  private readonly root: Entry[];
  private body: Buffer = Buffer.alloc(0);
  private end = 0;
  /** Of the last string scanned: whether it held an escape, a non-ASCII byte. */
  private escaped = false;
  private ascii = true;

  constructor(slots: readonly HotSlot[]) {
    const n = slots.length;
    this.found = new Uint8Array(n);
    this.start = new Int32Array(n);
    this.length = new Int32Array(n);
    this.numbers = new Float64Array(n);
    this.text = new Array<string | undefined>(n);
    this.root = [];
    let usable = true;
    slots.forEach((s, index) => {
      const path = pointerPath(s.pointer);
      if (!path.length || path.some((k) => /\p{Cs}/u.test(k))) usable = false;
      let level = this.root;
      path.forEach((k, depth) => {
        const bytes = Buffer.from(k, 'utf8');
        let entry = level.find((e) => Buffer.compare(e.key, bytes) === 0);
        if (!entry) level.push((entry = { key: bytes, slot: -1, child: undefined, below: [] }));
        if (depth === path.length - 1) entry.slot = index;
        else {
          entry.below.push(index);
          level = entry.child ??= [];
        }
      });
    });
    // Each key of a level has a bit in a 32-bit mask of the keys an object has shown (maxHotKeys is 32).
    const wide = (level: Entry[]): boolean => level.length > 32 || level.some((e) => e.child !== undefined && wide(e.child));
    this.usable = usable && !wide(this.root);
  }

  /**
   * The slots' values in body[from, to) (a payload's JSON text), into found/start/length/
   * numbers/text; false when the text is not plain (above): then nothing found is to be used.
   */
  scan(body: Buffer, from: number, to: number): boolean {
    if (!this.usable) return false;
    this.found.fill(Found.Missing);
    this.body = body;
    this.end = to;
    let p = this.space(from);
    if (p >= to || body[p] !== 0x7b) return false;
    p = this.object(p, this.root, 0);
    if (p < 0) return false;
    return this.space(p) === to;
  }

  private space(p: number): number {
    const b = this.body;
    while (p < this.end) {
      const c = b[p]!;
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      p++;
    }
    return p;
  }

  /** An object on a hot path at body[p] === '{': past its '}', or -1. */
  private object(p: number, level: Entry[], depth: number): number {
    if (depth > maxDepth) return -1;
    const b = this.body;
    p = this.space(p + 1);
    if (p < this.end && b[p] === 0x7d) return p + 1;
    let seen = 0;
    for (;;) {
      if (p >= this.end || b[p] !== quote) return -1;
      const close = this.string(p);
      if (close < 0) return -1;
      // A key written with an escape might be a hot key: the reference decides.
      if (this.escaped) return -1;
      const entry = this.entry(level, p + 1, close);
      p = this.space(close + 1);
      if (b[p] !== 0x3a) return -1;
      p = this.space(p + 1);
      if (entry >= 0) {
        const bit = 1 << entry;
        // JSON.parse keeps the last of a key given twice: the reference decides.
        if (seen & bit) return -1;
        seen |= bit;
        p = this.hotValue(p, level[entry]!, depth);
      } else p = this.skip(p, depth + 1);
      if (p < 0) return -1;
      p = this.space(p);
      if (b[p] === 0x2c) p = this.space(p + 1);
      else if (b[p] === 0x7d) return p + 1;
      else return -1;
    }
  }

  /** The index in `level` of the key body[from, to), or -1. */
  private entry(level: Entry[], from: number, to: number): number {
    const b = this.body;
    const n = to - from;
    for (let e = 0; e < level.length; e++) {
      const key = level[e]!.key;
      if (key.length !== n) continue;
      let k = 0;
      while (k < n && key[k] === b[from + k]) k++;
      if (k === n) return e;
    }
    return -1;
  }

  /** The value of a key on a hot path at body[p]: past it, or -1. */
  private hotValue(p: number, entry: Entry, depth: number): number {
    const b = this.body;
    const c = b[p];
    const slot = entry.slot;
    if (c === 0x7b) {
      if (slot >= 0) this.found[slot] = Found.Other;
      return entry.child ? this.object(p, entry.child, depth + 1) : this.skip(p, depth + 1);
    }
    if (c === 0x5b) {
      if (slot >= 0) this.found[slot] = Found.Other;
      for (const below of entry.below) this.found[below] = Found.Other;
      return this.skip(p, depth + 1);
    }
    // A scalar: the paths going on below it find nothing (Missing, as they are).
    if (c === quote) {
      const close = this.string(p);
      if (close < 0 || slot < 0) return close < 0 ? -1 : close + 1;
      if (!this.escaped && this.ascii) {
        this.found[slot] = Found.Bytes;
        this.start[slot] = p + 1;
        this.length[slot] = close - p - 1;
      } else {
        this.found[slot] = Found.Text;
        this.text[slot] = JSON.parse(b.toString('utf8', p, close + 1)) as string;
      }
      return close + 1;
    }
    if (c === 0x74 || c === 0x66 || c === 0x6e) {
      const past = this.literal(p);
      if (past >= 0 && slot >= 0) this.found[slot] = c === 0x74 ? Found.True : c === 0x66 ? Found.False : Found.Other;
      return past;
    }
    const past = this.number(p);
    if (past >= 0 && slot >= 0) {
      this.found[slot] = Found.Number;
      this.numbers[slot] = this.value(p, past);
    }
    return past;
  }

  /** Any value at body[p], checked as JSON.parse would: past it, or -1. */
  private skip(p: number, depth: number): number {
    if (depth > maxDepth || p >= this.end) return -1;
    const b = this.body;
    const c = b[p]!;
    if (c === quote) {
      const close = this.string(p);
      return close < 0 ? -1 : close + 1;
    }
    if (c === 0x7b || c === 0x5b) {
      const object = c === 0x7b;
      const last = object ? 0x7d : 0x5d;
      p = this.space(p + 1);
      if (b[p] === last) return p + 1;
      for (;;) {
        if (object) {
          if (b[p] !== quote) return -1;
          const close = this.string(p);
          if (close < 0) return -1;
          p = this.space(close + 1);
          if (b[p] !== 0x3a) return -1;
          p = this.space(p + 1);
        }
        p = this.skip(p, depth + 1);
        if (p < 0) return -1;
        p = this.space(p);
        if (b[p] === 0x2c) p = this.space(p + 1);
        else if (b[p] === last) return p + 1;
        else return -1;
      }
    }
    if (c === 0x74 || c === 0x66 || c === 0x6e) return this.literal(p);
    return this.number(p);
  }

  /**
   * A string at body[p] === '"': the index of its closing quote, or -1 (a control character, a
   * bad escape, an escaped surrogate — DuckDB refuses the whole payload: payload-text.ts).
   * Sets `escaped` and `ascii`.
   */
  private string(p: number): number {
    const b = this.body;
    const end = this.end;
    let escaped = false;
    let ascii = true;
    let q = p + 1;
    for (;;) {
      if (q >= end) return -1;
      const c = b[q]!;
      if (c === quote) break;
      if (c < 0x20) return -1;
      if (c >= 0x80) ascii = false;
      else if (c === backslash) {
        escaped = true;
        const e = b[q + 1];
        if (e === 0x75) {
          if (q + 6 > end) return -1;
          for (let k = q + 2; k < q + 6; k++) if (!isHex(b[k]!)) return -1;
          const h0 = b[q + 2]!;
          const h1 = b[q + 3]! | 0x20;
          if ((h0 | 0x20) === 0x64 && ((h1 >= 0x38 && h1 <= 0x39) || (h1 >= 0x61 && h1 <= 0x66))) return -1;
          q += 6;
          continue;
        }
        if (e !== quote && e !== backslash && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) return -1;
        q += 2;
        continue;
      }
      q++;
    }
    this.escaped = escaped;
    this.ascii = ascii;
    return q;
  }

  /** true, false or null at body[p]: past it, or -1. */
  private literal(p: number): number {
    const b = this.body;
    const word = b[p] === 0x74 ? 'true' : b[p] === 0x66 ? 'false' : 'null';
    if (p + word.length > this.end) return -1;
    for (let k = 1; k < word.length; k++) if (b[p + k] !== word.charCodeAt(k)) return -1;
    return p + word.length;
  }

  /** A number as JSON writes it at body[p]: past it, or -1. */
  private number(p: number): number {
    const b = this.body;
    const end = this.end;
    if (b[p] === 0x2d) p++;
    if (p >= end) return -1;
    if (b[p] === 0x30) p++;
    else if (isDigit(b[p]!)) while (p < end && isDigit(b[p]!)) p++;
    else return -1;
    if (p < end && b[p] === 0x2e) {
      p++;
      if (p >= end || !isDigit(b[p]!)) return -1;
      while (p < end && isDigit(b[p]!)) p++;
    }
    if (p < end && (b[p] === 0x65 || b[p] === 0x45)) {
      p++;
      if (p < end && (b[p] === 0x2b || b[p] === 0x2d)) p++;
      if (p >= end || !isDigit(b[p]!)) return -1;
      while (p < end && isDigit(b[p]!)) p++;
    }
    return p;
  }

  /** The number body[from, to) (checked by `number`) as JSON.parse reads it. */
  private value(from: number, to: number): number {
    const b = this.body;
    const negative = b[from] === 0x2d;
    const first = negative ? from + 1 : from;
    // Up to 15 digits and nothing else: exact as an integer sum (below 2^53).
    if (to - first <= 15) {
      let n = 0;
      let k = first;
      while (k < to && isDigit(b[k]!)) n = n * 10 + (b[k++]! - 0x30);
      if (k === to) return negative ? -n : n;
    }
    return Number(b.toString('latin1', from, to));
  }
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => isDigit(c) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
