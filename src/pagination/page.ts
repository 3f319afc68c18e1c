import { Type, type Static } from '@sinclair/typebox';
import type { CursorCodec, CursorKey } from './cursor.js';

/** `limit` and `cursor` of every list endpoint; a limit outside 1..100 is a 400, never clamped. */
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'page size, 1 to 100' })),
  cursor: Type.Optional(Type.String({ maxLength: 4096, description: 'next_cursor of the previous page' })),
});
export type PageQuery = Static<typeof PageQuery>;

export interface PageRequest {
  limit: number;
  /** keyset position after which the page starts; undefined for the first page */
  after: CursorKey | undefined;
}

/**
 * One pagination helper for every list: decode the request's cursor, and after the store
 * fetched `limit + 1` rows, cut the page and encode the next cursor from its last row.
 */
/** A page's bytes kept with the shared rows they were made from, and what else they were made of. */
interface KeptPage {
  limit: number;
  list: string;
  owner: string;
  variant: string;
  bytes: Buffer;
}

export class Paginator {
  /** By the rows array of a read-mostly answer: dropped with it (a write makes a new one). */
  private readonly kept = new WeakMap<readonly unknown[], KeptPage>();

  constructor(private readonly cursors: CursorCodec) {}

  request(query: PageQuery, list: string, owner: string): PageRequest {
    const after = query.cursor ? this.cursors.decode(query.cursor, list, owner) : undefined;
    return { limit: query.limit ?? 50, after };
  }

  page<T>(rows: T[], request: PageRequest, list: string, owner: string, keyOf: (row: T) => CursorKey): { items: T[]; nextCursor: string; hasMore: boolean };
  /** Rows shared between requests (a read-mostly answer): the page is cut without copying them. */
  page<T>(rows: readonly T[], request: PageRequest, list: string, owner: string, keyOf: (row: T) => CursorKey): { items: readonly T[]; nextCursor: string; hasMore: boolean };
  page<T>(rows: readonly T[], request: PageRequest, list: string, owner: string, keyOf: (row: T) => CursorKey) {
    const hasMore = rows.length > request.limit;
    const items = hasMore ? rows.slice(0, request.limit) : rows;
    const last = items[items.length - 1];
    const nextCursor = hasMore && last !== undefined ? this.cursors.encode(list, owner, keyOf(last)) : '';
    return { items, nextCursor, hasMore };
  }

  /**
   * A page the store cut itself, with the key the next one starts from (undefined: no more) — a
   * list whose page may end before `limit` with more to come (the audit log on SQLite).
   */
  pageAt<T>(items: T[], next: CursorKey | undefined, list: string, owner: string): { items: T[]; nextCursor: string; hasMore: boolean } {
    return { items, nextCursor: next ? this.cursors.encode(list, owner, next) : '', hasMore: next !== undefined };
  }

  /**
   * `page` of rows shared between requests — a read-mostly answer, the same array until anything
   * is written, never modified — written out by `write` as the response body's bytes, and kept
   * with that array: asked again with the same rows, limit, list, owner and `variant` (anything
   * else `write` depends on, e.g. a base URL), the same bytes are answered without cutting the
   * page, signing its cursor or serialising it. A write to the database makes a new array, so
   * the bytes never outlive the rows they show. Where reads are not shared (PostgreSQL), every
   * call writes afresh.
   */
  pageBytes<T>(
    rows: readonly T[],
    request: PageRequest,
    list: string,
    owner: string,
    keyOf: (row: T) => CursorKey,
    write: (page: { items: readonly T[]; nextCursor: string; hasMore: boolean }) => string,
    variant = '',
  ): Buffer {
    const kept = this.kept.get(rows);
    if (kept && kept.limit === request.limit && kept.list === list && kept.owner === owner && kept.variant === variant) return kept.bytes;
    const bytes = Buffer.from(write(this.page(rows, request, list, owner, keyOf)));
    this.kept.set(rows, { limit: request.limit, list, owner, variant, bytes });
    return bytes;
  }
}
