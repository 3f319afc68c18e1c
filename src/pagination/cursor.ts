import crypto from 'node:crypto';
import { badRequest } from '../errors/app-error.js';

/** Cursor format version; a cursor of another version is refused as stale. */
const version = 1;

export type CursorKey = ReadonlyArray<string | number>;

interface CursorBody {
  v: number;
  /** the list the cursor belongs to ("members", "media", "query:<hash>"…) */
  l: string;
  /** the tenant it belongs to */
  t: string;
  /** the keyset position: the sort key of the last item served */
  k: CursorKey;
}

/** Cursors remembered each way; a full memo starts over (they are recomputed at once). */
const memoSize = 1_000;

const invalid = () =>
  badRequest('invalid cursor: pass the next_cursor value of the previous page of this same list, unchanged');

/**
 * Opaque, signed cursors bound to a tenant and a list: base64url(JSON) "." HMAC. A cursor
 * edited by hand, made for another tenant or another list, or of an older format is refused
 * with 400 rather than silently serving someone else's page.
 */
export class CursorCodec {
  /** A KeyObject, not the bytes: createHmac then skips importing the key (4.3 → 2.5 µs a cursor). */
  private readonly key: crypto.KeyObject;
  /**
   * A cursor is a pure function of (list, tenant, key) and the server's secret, and the same
   * pages are asked for over and over (a members screen reloaded, a dashboard polling):
   * remembering recent ones each way skips the HMAC (~3.5 µs) and the base64 round trip.
   * Only cursors that verified are remembered when decoding.
   */
  private readonly encoded = new Map<string, string>();
  private readonly decoded = new Map<string, string>();

  constructor(key: Buffer) {
    this.key = crypto.createSecretKey(key);
  }

  private static remember(memo: Map<string, string>, from: string, to: string): void {
    if (memo.size >= memoSize) memo.clear();
    memo.set(from, to);
  }

  private sign(payload: string): string {
    return crypto.createHmac('sha256', this.key).update(payload).digest('base64url');
  }

  encode(list: string, tenant: string, key: CursorKey): string {
    const body: CursorBody = { v: version, l: list, t: tenant, k: key };
    const json = JSON.stringify(body);
    let cursor = this.encoded.get(json);
    if (cursor === undefined) {
      const payload = Buffer.from(json).toString('base64url');
      cursor = `${payload}.${this.sign(payload)}`;
      CursorCodec.remember(this.encoded, json, cursor);
    }
    return cursor;
  }

  decode(cursor: string, list: string, tenant: string): CursorKey {
    const json = this.decoded.get(cursor) ?? this.verify(cursor);
    // Parsed on every call: callers get their own key array.
    let body: CursorBody | null;
    try {
      body = JSON.parse(json) as CursorBody | null;
    } catch {
      throw invalid();
    }
    if (typeof body !== 'object' || body === null || body.v !== version || body.l !== list || body.t !== tenant || !Array.isArray(body.k)) throw invalid();
    return body.k;
  }

  /** The JSON body of a cursor whose signature holds. */
  private verify(cursor: string): string {
    const dot = cursor.indexOf('.');
    if (dot <= 0 || cursor.length > 4096) throw invalid();
    const payload = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.sign(payload));
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) throw invalid();
    const json = Buffer.from(payload, 'base64url').toString('utf8');
    CursorCodec.remember(this.decoded, cursor, json);
    return json;
  }
}
