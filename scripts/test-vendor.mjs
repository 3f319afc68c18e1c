// Pre-bundled packages for the test processes, as Vite pre-bundles a dev server's dependencies.
//
// Every test file runs in its own process, and importing the server's modules was its largest
// fixed cost: ~1,260 files of node_modules opened, resolved and linked one by one (kysely's ESM
// build alone is 264 files, TypeBox 248, undici 112). Here each package src/ imports is bundled
// once, with esbuild, into dist-test/.vendor/ — every package an entry point, code they share
// split into common chunks, so a module still exists once per process (one TypeBox format
// registry, one fastify) — and the transpiled src/ imports those files instead of the package
// names. Our own modules are not bundled: each keeps its file and its path, so what a module finds
// from import.meta.url is unchanged.
//
// Left out (imported from node_modules as before): native add-ons and packages that find files
// next to their own (DuckDB's binding, better-sqlite3, snappy, playwright-core, typescript, the OpenAPI
// schema validator, which reads its meta-schemas from its folder), the shippers'
// and SDKs' clients the tests drive "unmodified" (pino-loki, winston, @elastic/elasticsearch,
// OpenTelemetry's SDK, oidc-provider…), and pg, whose optional pg-native a bundle cannot leave out
// cleanly. DuckDB's JavaScript API (@duckdb/node-api, 124 CommonJS files) is bundled: every
// events worker started loaded it file by file, through cjs-module-lexer, ~150 ms of CPU per test
// server. A package imported both here and by one of those is two copies in that test's process,
// as it would be under any bundler; none of them share state with the server's copy.
import { build as esbuild } from 'esbuild';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const notBundled = [
  /^@duckdb\/node-bindings/, /^better-sqlite3$/, /^snappy$/, /^playwright-core/, /^typescript$/, /^tsx(\/|$)/, /^pg$/,
  /^oidc-provider$/, /^pino-loki$/, /^pino-elasticsearch$/, /^winston/, /^@elastic\//, /^@opentelemetry\/(api|sdk|resources|exporter)/,
  /^openapi-typescript$/, /^@redocly\//, /^@codemirror\//, /^@seriousme\//,
];

const isBundled = (spec) => !spec.startsWith('node:') && !notBundled.some((re) => re.test(spec));
/** A file name for a specifier: `@sinclair/typebox/value` → `sinclair__typebox__value`. */
const fileNameOf = (spec) => spec.replace(/^@/, '').replace(/[^A-Za-z0-9._-]/g, '__');

/**
 * Transpiles src/ into outDir (each .ts file to its .js at the same path) with the bundled
 * packages' imports pointed at outDir/.vendor/, and (re)builds the vendor bundle when the set of
 * specifiers or the installed packages changed.
 */
export async function buildTestTree(sources, outDir) {
  const vendorDir = path.resolve(outDir, '.vendor');
  const specifiers = new Set();
  await esbuild({
    entryPoints: sources, outdir: outDir, outbase: 'src', format: 'esm', platform: 'node', target: 'node20',
    sourcemap: 'linked', logLevel: 'warning', bundle: true,
    plugins: [{
      name: 'vendor-imports',
      setup(build) {
        // Our own modules stay files of their own: every relative import is left as written.
        build.onResolve({ filter: /^\./ }, (args) => (args.kind === 'entry-point' ? undefined : { path: args.path, external: true }));
        build.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.kind === 'entry-point') return undefined;
          if (!isBundled(args.path)) return { path: args.path, external: true };
          specifiers.add(args.path);
          return { path: pathToFileURL(path.join(vendorDir, `${fileNameOf(args.path)}.js`)).href, external: true };
        });
      },
    }],
  });
  await buildVendor([...specifiers].sort(), vendorDir);
}

async function buildVendor(specifiers, vendorDir) {
  const lock = fs.readFileSync('package-lock.json');
  const stamp = crypto.createHash('sha256').update(lock).update(JSON.stringify(specifiers))
    .update(fs.readFileSync(fileURLToPath(import.meta.url))).digest('hex');
  const stampFile = path.join(vendorDir, '.stamp');
  if (fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === stamp) return;
  fs.rmSync(vendorDir, { recursive: true, force: true });
  const entryDir = path.join(vendorDir, '.entries');
  fs.mkdirSync(entryDir, { recursive: true });
  const entryPoints = {};
  for (const spec of specifiers) {
    // Re-export what Node itself gives an importer of the package (for CommonJS, the names
    // cjs-module-lexer finds and `default`), so `import { Redis } from 'ioredis'` keeps working.
    const namespace = await import(spec);
    const names = Object.keys(namespace).filter((name) => name !== 'default' && /^[A-Za-z_$][\w$]*$/.test(name));
    const hasDefault = 'default' in namespace;
    const file = path.join(entryDir, `${fileNameOf(spec)}.mjs`);
    const lines = [];
    if (names.length) lines.push(`export { ${names.join(', ')} } from ${JSON.stringify(spec)};`);
    if (hasDefault) lines.push(`export { default } from ${JSON.stringify(spec)};`);
    fs.writeFileSync(file, lines.join('\n') + '\n');
    entryPoints[fileNameOf(spec)] = file;
  }
  await esbuild({
    entryPoints, outdir: vendorDir, bundle: true, splitting: true, format: 'esm', platform: 'node', target: 'node20',
    logLevel: 'warning', chunkNames: 'chunks/[name]-[hash]',
    // What is left out above stays out when a bundled package imports it.
    external: ['@duckdb/node-bindings*', 'better-sqlite3', 'snappy', 'playwright-core', 'typescript', 'pg', 'pg-native'],
    // CommonJS packages bundled into ESM still call require() for Node's built-ins.
    banner: { js: "import { createRequire as __vendorRequire } from 'node:module'; const require = __vendorRequire(import.meta.url);" },
  });
  fs.writeFileSync(stampFile, stamp);
}
