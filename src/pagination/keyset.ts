import { sql, type RawBuilder } from 'kysely';
import { badRequest } from '../errors/app-error.js';
import type { CursorKey } from './cursor.js';

/**
 * The condition "after the cursor" of a list ordered by (first desc, second desc): rows whose
 * (first, second) is below the last row served. Written as one row-value comparison, which
 * SQLite and PostgreSQL both turn into an index range; the spelled-out
 * `first < ? OR (first = ? AND second < ?)` made SQLite walk the tenant's index from the top
 * and skip every row of the earlier pages.
 */
export function keysetBefore(first: string, second: string, key: CursorKey): RawBuilder<boolean> {
  const [a, b] = keysetValues(key);
  return sql<boolean>`(${sql.ref(first)}, ${sql.ref(second)}) < (${a}, ${b})`;
}

/** The two values of a keyset cursor (a precompiled query's parameters); any other key is the cursor's 400. */
export function keysetValues(key: CursorKey): [CursorKey[number], CursorKey[number]] {
  if (key.length !== 2) throw badRequest('invalid cursor: pass the next_cursor value of the previous page of this same list, unchanged');
  return [key[0]!, key[1]!];
}
