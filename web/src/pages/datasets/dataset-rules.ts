// The Datasets pages' types and rules: a dataset as listed, severities, the reserved name, the
// name rule, and the explorer's address for a query.
import type { components } from '../../api/schema';

export type Summary = components['schemas']['DatasetSummary'];
export type Severity = NonNullable<Summary['default_severity']>;
export const severities: Severity[] = ['debug', 'info', 'warn', 'error', 'fatal'];
/** The reserved dataset (DECISIONS.md §9): system-managed, never renamed or archived. */
export const reservedName = 'default';
/** SPEC.md §2.3's name rule, for the browser's own check (escaped for the `v` flag of `pattern`). */
export const namePattern = '[a-z0-9]|[a-z0-9][a-z0-9_\\-]{0,62}[a-z0-9]';
export const nameHint = 'Lower-case letters, digits, _ and -; 1 to 64 characters; starts and ends with a letter or digit.';

/** The explorer's address with a query in it (the explorer reads `q`). */
export function explorerHref(q: string): string {
  return `/?q=${encodeURIComponent(q)}`;
}
