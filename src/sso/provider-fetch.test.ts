// callProvider against a loopback server answering what providers should not: too much, not JSON,
// an error page; and describeProviderError on errors whose messages quote what was answered.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedAgent } from '../outbound/guarded-agent.js';
import { freePort } from '../test-support/test-process.js';
import { callProvider, maxAnswerBytes } from './provider-fetch.js';
import { describeProviderError } from './oidc.js';
import { ProviderCallError } from './provider-error.js';

const secret = 'ami-id\nhostname\n';
const server = http.createServer((req, res) => {
  req.resume();
  if (req.url === '/huge') return void res.writeHead(200, { 'content-type': 'application/json' }).end(`"${'x'.repeat(maxAnswerBytes)}"`);
  if (req.url === '/error-page') return void res.writeHead(500, { 'content-type': 'text/html' }).end(`<h1>${secret}</h1>`);
  if (req.url === '/oauth-error') return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
  res.writeHead(200, { 'content-type': 'text/plain' }).end(secret);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const dispatcher = guardedAgent({ allowPrivate: true });
after(async () => {
  await dispatcher.close();
  server.closeAllConnections();
  server.close();
});

const fails = (promise: Promise<unknown>, message: string) => assert.rejects(promise, (error: unknown) => error instanceof ProviderCallError && error.message === message && !error.message.includes('ami-id'));

test('an answer past 1 MB is cut off and refused, naming its size', async () => {
  await fails(callProvider(dispatcher, 'the JWKS', `${base}/huge`, { method: 'GET' }, true), `the JWKS (${base}/huge) answered HTTP 200 with more than 1 MB`);
});

test('a body that is not JSON, or a status but 200 where one is expected: the status, never the body', async () => {
  await fails(callProvider(dispatcher, 'the token endpoint', `${base}/text`, { method: 'POST', body: 'code=x' }, false), `the token endpoint (${base}/text) answered HTTP 200 with a body that is not JSON`);
  await fails(callProvider(dispatcher, 'the token endpoint', `${base}/error-page`, { method: 'POST', body: 'code=x' }, false), `the token endpoint (${base}/error-page) answered HTTP 500 with a body that is not JSON`);
  await fails(callProvider(dispatcher, 'the discovery document', `${base}/error-page`, { method: 'GET' }, true), `the discovery document (${base}/error-page) answered HTTP 500`);
});

test("the token endpoint's OAuth error goes on to openid-client as an answer", async () => {
  const answer = await callProvider(dispatcher, 'the token endpoint', `${base}/oauth-error`, { method: 'POST', body: 'code=x' }, false);
  assert.equal(answer.status, 400);
  assert.deepEqual(await answer.json(), { error: 'invalid_grant' });
});

test('nobody listening: the socket error code', async () => {
  const closed = `http://127.0.0.1:${await freePort()}/`;
  await fails(callProvider(dispatcher, 'the discovery document', closed, { method: 'GET' }, true), `the discovery document (${closed}) could not be reached (ECONNREFUSED)`);
});

test('describeProviderError: a parser error anywhere under the error is a fixed text, an unknown error only its class', () => {
  let parse: unknown;
  try {
    JSON.parse(secret);
  } catch (error) {
    parse = error;
  }
  assert.match(String((parse as Error).message), /ami-id/, 'what a parser says quotes its input');
  const wrapped = new Error('parsing error occured', { cause: new Error('failed to parse "response" body as JSON', { cause: parse }) });
  assert.equal(describeProviderError(wrapped), 'an answer of the provider is not valid JSON');
  assert.equal(describeProviderError(new RangeError(secret)), 'an unexpected RangeError while calling the provider');
});
