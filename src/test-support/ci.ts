// What a test needs to run, and which leg of CI runs it. CI (.ci/run, which sets OPS_CI=1)
// installs and starts everything the tests need and runs every leg, so there a skipped test can
// only mean something did not run that should have: nothing skips in CI (scripts/run-tests.mjs
// also fails the run on any skip that gets through). On a developer's machine the same tests skip,
// saying why, so `npm test` runs with whatever the machine has.
import { describe, test } from 'node:test';

/** Set by .ci/run for every leg. */
export const inCI = process.env.OPS_CI === '1';

/**
 * The node:test options for a test that needs something from the machine (Chromium, syslog-ng,
 * Redis and NATS…): `missing` says what is absent, or is false/undefined when all is there.
 * Outside CI a missing requirement skips the test with that reason; in CI it fails the file at
 * once, naming what CI failed to provide.
 */
export function needs(missing: string | false | undefined): { skip: string | false } {
  if (!missing) return { skip: false };
  if (inCI) throw new Error(`CI must provide what this test needs, and did not: ${missing}`);
  return { skip: missing };
}

type TestFn = typeof test;
type DescribeFn = typeof describe;

/**
 * Tests that belong to one leg of CI (PostgreSQL, ClickHouse, S3, or the SQLite default only):
 * `runsHere` says whether this run is that leg, `where` names it. Here they are the ordinary
 * `test` and `describe`. Elsewhere, outside CI they are registered as skipped, saying which leg
 * runs them; in CI they are not registered at all, since .ci/run runs every leg.
 */
export function onLeg(runsHere: boolean, where: string): { test: TestFn; describe: DescribeFn } {
  if (runsHere) return { test, describe };
  if (inCI) {
    const none = (() => Promise.resolve()) as unknown as TestFn & DescribeFn;
    return { test: none, describe: none };
  }
  const reason = `runs on ${where}`;
  const skipped = (register: (...args: unknown[]) => unknown) => (name: unknown, second?: unknown, third?: unknown) =>
    typeof second === 'function' || second === undefined ? register(name, { skip: reason }, second) : register(name, { ...(second as object), skip: reason }, third);
  return { test: skipped(test as never) as unknown as TestFn, describe: skipped(describe as never) as unknown as DescribeFn };
}

/** The legs, as the test files name them. */
export const legs = {
  postgres: () => onLeg(process.env.OPS_TEST_DATABASE_URL !== undefined, 'the PostgreSQL leg (OPS_TEST_DATABASE_URL)'),
  sqlite: () => onLeg(process.env.OPS_TEST_DATABASE_URL === undefined, 'the SQLite legs (OPS_TEST_DATABASE_URL unset)'),
  clickhouse: () => onLeg(process.env.OPS_TEST_CLICKHOUSE_URL !== undefined, 'the ClickHouse leg (scripts/clickhouse.sh start; eval "$(scripts/clickhouse.sh env)")'),
  duckdb: () => onLeg(process.env.OPS_TEST_CLICKHOUSE_URL === undefined, 'the legs on the embedded DuckDB (OPS_TEST_CLICKHOUSE_URL unset)'),
  s3: () => onLeg(process.env.OPS_TEST_BLOB_URL !== undefined, 'the S3 leg (scripts/swift-s3.sh start; eval "$(scripts/swift-s3.sh env)")'),
  files: () => onLeg(process.env.OPS_TEST_BLOB_URL === undefined, 'the legs on the file blob store (OPS_TEST_BLOB_URL unset)'),
};
