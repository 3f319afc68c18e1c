import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import openapiTS, { astToString } from 'openapi-typescript';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import type { Middleware } from 'openapi-fetch';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { gif } from '../test-support/media/test-files.js';
import { tsImport } from 'tsx/esm/api';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const fixture = path.join(repoRoot, 'src/http/openapi-client-fixture/client.mts');
// web/scripts is TypeScript outside src/ (which `npm test` runs transpiled into dist-test/): loaded through tsx.
const { apiTypesFile, generateApiTypes } = (await tsImport(path.join(repoRoot, 'web/scripts/api-types.ts'), import.meta.url)) as typeof import('../../web/scripts/api-types.js');
const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

interface Operation {
  operationId?: string;
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  parameters?: Array<{ in: string; name: string }>;
}
interface Document {
  openapi: string;
  info: { version: string; license?: { name: string; identifier?: string; url?: string } };
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
}

/** Every operation of the document as `METHOD /path` with its operation. */
function operations(doc: Document): Array<{ key: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([p, item]) =>
    Object.entries(item)
      .filter(([m]) => methods.includes(m))
      .map(([m, op]) => ({ key: `${m.toUpperCase()} ${p}`, op })),
  );
}

/** openapi-typescript's types for the document; `format: binary` is a Blob, as its docs advise for uploads. */
async function generateTypes(doc: Document): Promise<string> {
  const ast = await openapiTS(doc as unknown as Parameters<typeof openapiTS>[0], {
    silent: true,
    transform: (schema) => (schema.format === 'binary' ? ts.factory.createTypeReferenceNode('Blob') : undefined),
  });
  return astToString(ast);
}

/** Type-checks the client as a browser project would: strict, DOM types, no Node types. */
function typeCheck(entry: string): string[] {
  const program = ts.createProgram([entry], {
    strict: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1} ` : '';
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

describe('OpenAPI document: typed client, operation ids, servers, lint', () => {
  let s: TestServer;
  let doc: Document;
  let dir: string;
  before(async () => {
    // Announced features on, so every documented operation does its real work.
    s = await startTestServer({ env: { OPS_FEATURES: 'logs,cases,apps' } });
    doc = (await s.request('GET', '/openapi.json', { token: null })).body as Document;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-openapi-client-'));
  });
  after(async () => {
    await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('every operation has an operationId, unique across the document', () => {
    const all = operations(doc);
    assert.ok(all.length > 20, `only ${all.length} operations`);
    const missing = all.filter((o) => !o.op.operationId).map((o) => o.key);
    assert.deepEqual(missing, [], 'operations without operationId');
    const seen = new Map<string, string>();
    for (const { key, op } of all) {
      const id = op.operationId!;
      assert.match(id, /^[a-z][A-Za-z0-9]*$/, `${key}: ${id}`);
      assert.equal(seen.get(id), undefined, `${id} is used by ${seen.get(id)} and ${key}`);
      seen.set(id, key);
    }
    assert.equal(doc.paths['/v1/media']?.post?.operationId, 'uploadMedia');
    assert.equal(doc.paths['/v1/datasets/{name}/ingest']?.post?.operationId, 'ingestEvents');
    assert.equal(doc.paths['/v1/orgs/{orgId}/members']?.get?.operationId, 'listOrgMembers');
    assert.equal(doc.paths['/v1/media/{id}/restore']?.post?.operationId, 'restoreMedia');
  });

  test('info carries a licence and the package version', () => {
    assert.equal(doc.info.version, manifest.version);
    assert.equal(doc.info.license?.name, 'Proprietary');
  });

  test('POST /media and POST /datasets/{name}/ingest document their bodies (and gzip)', () => {
    const upload = doc.paths['/v1/media']!.post!.requestBody!.content['multipart/form-data']!.schema as {
      required: string[];
      properties: Record<string, { type?: string; format?: string }>;
    };
    assert.deepEqual(upload.required, ['file']);
    assert.equal(upload.properties.file?.format, 'binary');
    assert.ok(upload.properties.folder && upload.properties.tags);
    const ingest = doc.paths['/v1/datasets/{name}/ingest']!.post!;
    assert.deepEqual(Object.keys(ingest.requestBody!.content).sort(), ['application/json', 'application/x-ndjson']);
    assert.ok(ingest.parameters?.some((p) => p.in === 'header' && p.name.toLowerCase() === 'content-encoding'));
  });

  test('documented bodies are not validated by Fastify: the handlers still judge them', async () => {
    // Ajv would refuse `event: 1` with a 400; the ingest handler fails that event alone.
    const ingest = await s.request('POST', '/datasets/loose/ingest', { json: [{ event: 1 }, { event: 'ok', extra: true }] });
    assert.equal(ingest.status, 200, ingest.text);
    assert.deepEqual([ingest.body.ingested, ingest.body.failed, ingest.body.failures[0].index], [1, 1, 0]);
    // A multipart body is no JSON object: a validated route would answer 400 before the handler.
    const form = new FormData();
    form.append('tags', 'x,y');
    form.append('unknown', 'ignored');
    form.append('file', new Blob([gif()], { type: 'image/gif' }), 'pixel.gif');
    const upload = await s.request('POST', '/media', { body: form });
    assert.equal(upload.status, 201, upload.text);
    assert.deepEqual(upload.body.tags, ['x', 'y']);
  });

  test('a client generated with openapi-typescript type-checks and calls every operation on the server', async () => {
    fs.writeFileSync(path.join(dir, 'api.ts'), await generateTypes(doc));
    fs.copyFileSync(fixture, path.join(dir, 'client.mts'));
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir');

    assert.deepEqual(typeCheck(path.join(dir, 'client.mts')), [], 'the typed client has type errors');

    // Server URL + path must be the URL the server answers: the client is given servers[0].url.
    assert.equal(doc.servers[0]?.url, s.apiUrl);
    const calls: Array<{ method: string; schemaPath: string; status: number; body: string }> = [];
    const observe: Middleware = {
      async onResponse({ request, schemaPath, response }) {
        const json = response.headers.get('content-type')?.includes('application/json');
        calls.push({ method: request.method, schemaPath, status: response.status, body: json ? await response.clone().text() : '' });
      },
    };
    const client = (await tsImport(pathToFileURL(path.join(dir, 'client.mts')).href, import.meta.url)) as {
      callEveryOperation(target: { serverUrl: string; token: string; orgId: string; userId: string; observe: Middleware }): Promise<void>;
    };
    const a = s.tenants.a;
    await client.callEveryOperation({ serverUrl: doc.servers[0]!.url, token: a.token, orgId: a.orgId, userId: a.userId, observe });

    const idOf = new Map(operations(doc).map(({ key, op }) => [key, op.operationId!]));
    const called = new Set(calls.map((c) => idOf.get(`${c.method} ${c.schemaPath}`) ?? `undocumented ${c.method} ${c.schemaPath}`));
    const notCalled = [...idOf.values()].filter((id) => !called.has(id));
    assert.deepEqual(notCalled, [], 'operations the client does not call (add them to openapi-client-fixture/client.mts)');
    assert.deepEqual([...called].filter((id) => id.startsWith('undocumented')), []);
    for (const c of calls) {
      assert.ok(c.status < 500, `${c.method} ${c.schemaPath} → ${c.status} ${c.body}`);
      assert.doesNotMatch(c.body, /no endpoint/, `${c.method} ${c.schemaPath} reached no route`);
    }
    const statuses = (id: string) => calls.filter((c) => idOf.get(`${c.method} ${c.schemaPath}`) === id).map((c) => c.status);
    assert.deepEqual(statuses('uploadMedia'), [201]);
    assert.deepEqual(statuses('uploadMediaBase64'), [201]);
    assert.deepEqual(statuses('restoreMedia'), [200], 'the file deleted by the client is listed with deleted=true and restored');
    assert.deepEqual(statuses('createOrgMember'), [201]);
    // JSON array, one object, NDJSON, gzip NDJSON: every event stored.
    const ingests = calls.filter((c) => idOf.get(`${c.method} ${c.schemaPath}`) === 'ingestEvents');
    assert.deepEqual(
      ingests.map((c) => [c.status, (JSON.parse(c.body) as { ingested: number; failed: number }).ingested, (JSON.parse(c.body) as { failed: number }).failed]),
      [[200, 2, 0], [200, 1, 0], [200, 2, 0], [200, 2, 0]],
    );
    for (const id of ['listOrgMembers', 'createToken', 'listTokens', 'revokeToken', 'getMedia', 'listMedia', 'createDataset', 'runQuery', 'tailQuery', 'createCaseAttachment', 'deleteMedia', 'restoreMedia', 'archiveDataset']) {
      assert.ok(statuses(id).every((status) => status >= 200 && status < 300), `${id} → ${statuses(id).join(', ')}`);
    }
  });

  test('the dashboard\'s API types (web/src/api/schema.d.ts) are what this document generates', async () => {
    const committed = fs.readFileSync(apiTypesFile, 'utf8');
    assert.ok(committed === (await generateApiTypes(doc)), 'web/src/api/schema.d.ts is stale: run `npm run api:types` and commit it');
  });

  test('lint: Redocly recommended ruleset reports no error; the JSON Schema validator accepts it', async (t) => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    const describe = (p: (typeof problems)[number]) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(', ')}`;
    for (const p of problems) t.diagnostic(describe(p));
    assert.deepEqual(problems.filter((p) => p.severity === 'error').map(describe), []);
    const fixed = ['operation-operationId', 'operation-operationId-unique', 'operation-operationId-url-safe', 'info-license', 'info-license-strict', 'path-parameters-defined'];
    assert.deepEqual(problems.filter((p) => fixed.includes(p.ruleId)).map(describe), []);
    const result = await new Validator().validate(doc as unknown as Parameters<Validator['validate']>[0]);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  });
});

describe('OpenAPI servers follow OPS_PUBLIC_URL', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { OPS_PUBLIC_URL: 'https://api.example.com/ops/' } });
  });
  after(() => s.close());

  test('servers is the public address; server URL + path is the public URL of the endpoint', async () => {
    const doc = (await s.request('GET', '/openapi.json', { token: null })).body as Document;
    assert.deepEqual(doc.servers, [{ url: 'https://api.example.com/ops' }]);
    // Paths carry /v1, as the routes do: the two join into the address clients are given.
    assert.ok(doc.paths['/v1/tokens']);
    assert.equal(`${doc.servers[0]!.url}/v1/tokens`, 'https://api.example.com/ops/v1/tokens');
    assert.ok(Object.keys(doc.paths).every((p) => p.startsWith('/v1/')));
  });
});
