// The peers of bench/http.ts, on the route and body shape of GET /v1/orgs/{id}/members.
//   bare      a bare Fastify route: no authentication, no database, no logging, no schemas.
//             What Fastify on this machine can do at most.
//   contract  (argv: PORT contract DIR) the same plus the least the contract asks of every authenticated request, each
//             done the cheapest way we know: a request logger (pino, warn), the X-Request-Id
//             header, declared schemas (params and query validated, body serialised), the token's
//             SHA-256 looked up in a map, the three RateLimit headers, and one check of the SQLite
//             change counter. No scopes, tenancy, cursors or rows: a floor, not a server.
//   replay    (argv: PORT replay FILE) a bare node:http server answering each request with the
//             bytes our server answered it once (FILE: bench/http.ts's capture of status, headers
//             and body by method and path), after reading the request's body. What answering
//             those same bytes costs at least, without any framework.
import crypto from 'node:crypto';
import path from 'node:path';
import fs from 'node:fs';
import http from 'node:http';
import SQLite from 'better-sqlite3';
import Fastify, { type FastifySchema, type onRequestHookHandler } from 'fastify';
import { walChangeCounter } from '../src/stores/metadata/wal-change-counter.js';
import type { Captured } from './support.js';

const port = Number(process.argv[2]);
const mode = process.argv[3];
const contract = mode === 'contract';
const body = {
  members: [
    {
      id: 'usr_01M7ZRGHGA345RAFDGBR788ZZD',
      name: 'Owner',
      email: 'owner@localhost',
      avatar: '',
      role: { id: 'rol_01M7ZRGHG9PHEFVXTHWCTE87RJ', name: 'Owner', isSystem: true },
      joinedAt: '2026-11-21T19:14:43.338Z',
    },
  ],
  nextCursor: '',
};

if (mode === 'replay') {
  const captured = JSON.parse(fs.readFileSync(process.argv[4]!, 'utf8')) as Captured[];
  const answers = new Map(captured.map((c) => [`${c.method} ${c.path}`, { status: c.status, headers: c.headers, body: Buffer.from(c.body) }]));
  const server = http.createServer((request, response) => {
    const answer = answers.get(`${request.method} ${request.url}`);
    // The body is read to its end, as any server must before answering (POST /v1/query's).
    request.resume();
    request.once('end', () => {
      if (!answer) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(answer.status, { ...answer.headers, 'content-length': answer.body.length });
      response.end(answer.body);
    });
  });
  // Our server's keep-alive timeout, so the client keeps its connections alike with both.
  server.keepAliveTimeout = 72_000;
  server.listen(port, '127.0.0.1');
} else if (!contract) {
  const app = Fastify({ logger: false });
  app.get('/bare', async () => body);
  await app.listen({ port, host: '127.0.0.1' });
} else {
  let requests = 0;
  const app = Fastify({ logger: { level: 'warn' }, genReqId: () => `req_${(requests++).toString(36)}`, requestIdHeader: false });
  // The directory is bench/http.ts's, which removes it afterwards.
  const file = path.join(process.argv[4]!, 'metadata.sqlite');
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  const changes = walChangeCounter(database, file);
  const tokens = new Map<string, { orgId: string }>();
  const string = { type: 'string' };
  const schema: FastifySchema = {
    params: { type: 'object', properties: { orgId: { type: 'string', maxLength: 64 } }, required: ['orgId'] },
    querystring: {
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 }, cursor: { type: 'string', maxLength: 4096 } },
    },
    response: {
      200: {
        type: 'object',
        properties: {
          members: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                ...{ id: string, name: string, email: string, avatar: string, joinedAt: string },
                role: { type: 'object', properties: { id: string, name: string, isSystem: { type: 'boolean' } } },
              },
            },
          },
          nextCursor: string,
        },
      },
    },
  };
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  const authenticate: onRequestHookHandler = (request, reply, done) => {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match) return done(new Error('no token'));
    const hash = crypto.hash('sha256', match[1]!, 'hex');
    // Any token is accepted (the bench's token is not known here); the lookup is what costs.
    if (!tokens.has(hash)) tokens.set(hash, { orgId: 'x' });
    if (!tokens.get(hash)) return done(new Error('unknown token'));
    reply.header('RateLimit-Limit', 1_000_000);
    reply.header('RateLimit-Remaining', 999_999);
    reply.header('RateLimit-Reset', 0);
    done();
  };
  app.get('/v1/orgs/:orgId/members', { schema, onRequest: authenticate }, async () => {
    changes.read();
    return body;
  });
  await app.listen({ port, host: '127.0.0.1' });
}
