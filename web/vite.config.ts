import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.resolve(here, '../dist/web');

/**
 * Writes `.br` and `.gz` beside every emitted script, style and page, so the server sends them
 * precompressed (@fastify/static `preCompressed`) without compressing on each request.
 */
function precompress(): Plugin {
  return {
    name: 'opsplatform-precompress',
    apply: 'build',
    writeBundle() {
      const walk = (dir: string): string[] =>
        fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
      for (const file of walk(outDir).filter((f) => /\.(js|css|html|svg|json)$/.test(f))) {
        const bytes = fs.readFileSync(file);
        fs.writeFileSync(`${file}.br`, zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }));
        fs.writeFileSync(`${file}.gz`, zlib.gzipSync(bytes, { level: 9 }));
      }
    },
  };
}

// The dashboard (DECISIONS.md §17, docs/dashboard.md): a single-page app served by the API
// listener under /dashboard/, built into dist/web by `npm ci` (the `prepare` script).
export default defineConfig({
  root: here,
  base: '/dashboard/',
  publicDir: false,
  build: {
    outDir,
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    // The explorer is the home page: one entry, charts and editor included (budget: 300 KB compressed).
    chunkSizeWarningLimit: 1024,
  },
  plugins: [precompress()],
  server: {
    // `npm run dev:web`: the page on Vite's server, the API on `npm run dev`'s port.
    proxy: { '/v1': 'http://127.0.0.1:3000', '/dashboard/session': 'http://127.0.0.1:3000', '/dashboard/password': 'http://127.0.0.1:3000' },
  },
});
