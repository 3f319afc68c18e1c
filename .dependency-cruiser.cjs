// Which way the imports under src/ may point (docs/architecture.md explains the layers).
// `npm run lint` runs scripts/check-dependencies.mjs, which cruises src/ with this file and
// fails on: a cycle between files, an import from a lower layer into a higher one, and a cycle
// between src/'s top-level folders (dependency-cruiser checks cycles between files only, so the
// script finds the folder-level ones itself, from the same cruise).
//
// Type-only imports count like any other: a lower layer that needs a higher layer's type to
// compile depends on it just the same, and a cycle of types is still a cycle to untangle.
//
// Test code (files ending .test.ts, the src/test-support folder, the test-*.ts and *-testing.ts
// helpers beside the code they test) may import any layer: a test of a low folder starting the
// whole server is normal. A cycle between files still counts for them (it makes the order in
// which modules load, and so what a test sees, depend on which file was imported first), but
// test code takes no part in the folder-level cycle check.

const { layers, testCode } = require('./scripts/dependency-layers.cjs');

const folderPattern = (folders) => `^src/(${folders.filter((f) => f !== '.').join('|')})/` + (folders.includes('.') ? '|^src/[^/]+$' : '');

const layerRules = layers.slice(0, -1).map((layer, i) => {
  const higher = layers.slice(i + 1).flatMap((l) => l.folders);
  return {
    name: 'layers',
    comment: `${layer.name} (${layer.folders.join(', ')}) imports none of the layers above it`,
    severity: 'error',
    from: { path: folderPattern(layer.folders), pathNot: testCode },
    to: { path: folderPattern(higher) },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no cycle between files: each module can be understood, loaded and tested from the ones below it',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'engine-backends',
      comment: "the engine's DuckDB and ClickHouse back ends are reached through the engine's interface (open-event-store.ts), not imported from outside src/engine",
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/engine/|${testCode}` },
      to: { path: '^src/engine/(duckdb|clickhouse)/' },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|dist-test)/' },
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.json'] },
  },
};
