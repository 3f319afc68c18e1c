import type { Migration } from 'kysely';
import * as foundation from './0001-foundation.js';

/**
 * Every metadata migration, in order. A capability that needs tables adds its file here;
 * names sort in the order they must run.
 */
export const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
};
