// The peer of bench/http.ts: a bare Fastify route answering a body of the same shape, with no
// authentication, no database and no logging. What Fastify on this machine can do at most.
import Fastify from 'fastify';

const port = Number(process.argv[2]);
const app = Fastify({ logger: false });
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
app.get('/bare', async () => body);
await app.listen({ port, host: '127.0.0.1' });
