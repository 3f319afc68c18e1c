// The layers of src/ and the dependencies let off for now: read by .dependency-cruiser.cjs
// (the rules) and scripts/check-dependencies.mjs (the folder-level cycle check, the exceptions).
// docs/architecture.md describes the layers.

/** The layers, lowest first; a folder may import its own layer and those below. */
const layers = [
  { name: 'shared', folders: ['shared'] },
  { name: 'config', folders: ['config'] },
  { name: 'kernel', folders: ['kernel', 'http', 'errors', 'outbound'] },
  { name: 'stores', folders: ['stores', 'engine', 'tenancy', 'pagination', 'cluster', 'plans', 'quotas'] },
  { name: 'foundation', folders: ['app', 'audit', 'auth', 'orgs', 'members', 'tokens', 'idempotency'] },
  {
    name: 'capabilities',
    folders: [
      'media', 'delivery', 'events', 'query', 'tail', 'monitors', 'notifications', 'sso', 'dashboard', 'searches',
      'usage', 'health', 'logs', 'cases', 'apps', 'features', 'otlp', 'shippers',
    ],
  },
  { name: 'wiring', folders: ['cli', '.'] },
];

/** Test code, which may import any layer (above). */
const testCode = '(\\.test\\.ts$|^src/test-support/|/test-[^/]+\\.ts$|-testing\\.ts$)';

/**
 * Dependencies allowed for now although they break a rule, each with the reason; the check
 * fails when one no longer matches anything, so a fixed one cannot stay listed. `from` and `to`
 * are regular expressions over paths from the project root; `rule` is the rule they are let
 * off ('layers' or 'no-circular'), or 'folders' for the folder-level cycle check.
 */
const exceptions = [];

module.exports = { layers, testCode, exceptions };
