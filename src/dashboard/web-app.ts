import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';

/**
 * The built single-page app (web/, `vite build` into dist/web by `npm ci`'s prepare script).
 * Resolved the same from src/dashboard (tsx) and dist/dashboard (compiled).
 */
export const webAppDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/web');

/** The app's pages: each answers the app's index.html, which routes on the path. */
export const pagePaths = ['/dashboard/', '/dashboard/sign-in', '/dashboard/set-password', '/dashboard/datasets', '/dashboard/datasets/:name', '/dashboard/media', '/dashboard/tokens', '/dashboard/members', '/dashboard/usage', '/dashboard/alerts', '/dashboard/alerts/:id', '/dashboard/alerts/:id/edit', '/dashboard/sso', '/dashboard/audit'];

/** When the app was not built (a checkout without `npm ci`): a page that says how to build it. */
const notBuilt = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>opsplatform dashboard</title></head>
<body><h1>opsplatform</h1><p>The dashboard has not been built in this checkout: run <code>npm run build:web</code> (or <code>npm ci</code>) and reload.</p></body></html>
`;

/**
 * Serves the app: hashed assets under /dashboard/assets/ cached for a year as immutable, sent
 * precompressed (brotli or gzip, written beside them at build time); the pages revalidated on
 * every load (no-cache) so a new build is picked up at once.
 */
export async function registerWebApp(app: Api): Promise<void> {
  const assets = path.join(webAppDir, 'assets');
  if (fs.existsSync(assets)) {
    await app.register(fastifyStatic, {
      root: assets,
      prefix: '/dashboard/assets/',
      preCompressed: true,
      immutable: true,
      maxAge: '365d',
      index: false,
      list: false,
      dotfiles: 'deny',
      schemaHide: true,
    });
  }
  let index: { html: string; mtimeMs: number } | undefined;
  const page = (_request: FastifyRequest, reply: FastifyReply) => {
    const file = path.join(webAppDir, 'index.html');
    let html = notBuilt;
    try {
      const mtimeMs = fs.statSync(file).mtimeMs;
      if (index?.mtimeMs !== mtimeMs) index = { html: fs.readFileSync(file, 'utf8'), mtimeMs };
      html = index.html;
    } catch {
      index = undefined;
    }
    return reply.header('Cache-Control', 'no-cache').type('text/html; charset=utf-8').send(html);
  };
  for (const url of pagePaths) app.get(url, { schema: { hide: true } }, page);
}
