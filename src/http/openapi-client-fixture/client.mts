// A client as an API user would write it: openapi-fetch typed by `paths`, which
// openapi-client.test.ts generates with openapi-typescript from the served /v1/openapi.json into
// api.ts beside a copy of this file. The test type-checks the copy (no error allowed), then runs it
// against the real server. This file is .mts so the project's tsconfig (src/**/*.ts), which has no
// api.ts, leaves it alone.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './api.js';

export interface Target {
  /** servers[0].url of the served document */
  serverUrl: string;
  token: string;
  orgId: string;
  userId: string;
  /** Sees every request and response (the test records which operations were called). */
  observe: Middleware;
}

/** One event as a client builds it: the body type of the JSON ingest. */
type IngestJson = paths['/v1/datasets/{name}/ingest']['post']['requestBody']['content']['application/json'];

/** A 1×1 GIF: the media endpoints take images, video and PDF. */
const gif = Uint8Array.from('474946383961010001008000000000ffffff21f90401000000002c00000000010001000002024401003b'.match(/../g) ?? [], (h) => parseInt(h, 16));

async function gzip(text: string): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Calls every operation of the document at least once. */
export async function callEveryOperation(target: Target): Promise<void> {
  const client = createClient<paths>({ baseUrl: target.serverUrl, headers: { Authorization: `Bearer ${target.token}` } });
  client.use(target.observe);
  const missingUser = 'usr_01J00000000000000000000000';

  // members
  const members = await client.GET('/v1/orgs/{orgId}/members', { params: { path: { orgId: target.orgId }, query: { limit: 10 } } });
  const roles = await client.GET('/v1/orgs/{orgId}/roles', { params: { path: { orgId: target.orgId } } });
  const roleId = roles.data?.roles.find((r) => r.name === 'Viewer')?.id ?? members.data?.members[0]?.role.id ?? 'rol_unknown';
  await client.POST('/v1/orgs/{orgId}/members', { params: { path: { orgId: target.orgId } }, body: { email: 'invited-by-client@example.com', name: 'Invited', roleId } });
  await client.PATCH('/v1/orgs/{orgId}/members/{userId}', { params: { path: { orgId: target.orgId, userId: missingUser } }, body: { roleId } });
  await client.DELETE('/v1/orgs/{orgId}/members/{userId}', { params: { path: { orgId: target.orgId, userId: missingUser } } });
  // The audit log (DECISIONS.md §20), filtered: the invitation above is in it.
  await client.GET('/v1/orgs/{orgId}/audit', { params: { path: { orgId: target.orgId }, query: { action: 'member.invite', limit: 5 } } });

  // tokens, usage, billing
  const token = await client.POST('/v1/tokens', { body: { name: 'typed client', scopes: ['media:read'], mode: 'live', expires_at: null } });
  await client.GET('/v1/tokens', { params: { query: { limit: 5 } } });
  await client.DELETE('/v1/tokens/{id}', { params: { path: { id: token.data?.id ?? 'tok_unknown' } } });
  await client.GET('/v1/usage');
  await client.GET('/v1/billing');

  // notification channels: disabled before its test, so nothing is sent anywhere (the test answers 409)
  const channel = await client.POST('/v1/channels', { body: { name: 'typed client', kind: 'webhook', url: 'https://93.184.216.34/hook' } });
  const channelId = channel.data?.id ?? 'ch_unknown';
  await client.GET('/v1/channels', { params: { query: { limit: 5 } } });
  await client.GET('/v1/channels/{id}', { params: { path: { id: channelId } } });
  await client.PATCH('/v1/channels/{id}', { params: { path: { id: channelId } }, body: { name: 'typed client, disabled', enabled: false } });
  await client.POST('/v1/channels/{id}/test', { params: { path: { id: channelId } } });
  await client.GET('/v1/channels/{id}/deliveries', { params: { path: { id: channelId }, query: { limit: 5 } } });
  // monitors on the disabled channel: their test notification is stored and failed, never sent
  const monitor = await client.POST('/v1/monitors', { body: { name: 'typed client', kind: 'match', q: 'event:anticheat.flag', channel_ids: [channelId] } });
  const monitorId = monitor.data?.id ?? 'mon_unknown';
  await client.GET('/v1/monitors', { params: { query: { limit: 5 } } });
  await client.GET('/v1/monitors/{id}', { params: { path: { id: monitorId } } });
  await client.PATCH('/v1/monitors/{id}', { params: { path: { id: monitorId } }, body: { group_window: '30s' } });
  await client.POST('/v1/monitors/{id}/test', { params: { path: { id: monitorId } } });
  await client.GET('/v1/monitors/{id}/history', { params: { path: { id: monitorId }, query: { limit: 5 } } });
  await client.POST('/v1/monitors/preview', { body: { q: 'severity >= error stats count()', window: '5m', condition: { op: '>', value: 1 } } });
  await client.DELETE('/v1/monitors/{id}', { params: { path: { id: monitorId } } });
  await client.DELETE('/v1/channels/{id}', { params: { path: { id: channelId } } });

  // media: multipart (a FormData built from the typed body), then base64
  const upload = await client.POST('/v1/media', {
    body: { file: new Blob([gif], { type: 'image/gif' }), folder: 'docs', tags: ['a', 'b'] },
    bodySerializer: (body) => {
      const form = new FormData();
      form.append('file', body.file, 'pixel.gif');
      if (body.folder !== undefined) form.append('folder', body.folder);
      for (const tag of typeof body.tags === 'string' ? [body.tags] : (body.tags ?? [])) form.append('tags', tag);
      return form;
    },
  });
  const fileId = upload.data?.id ?? 'f_unknown';
  await client.POST('/v1/media/base64', { body: { filename: 'pixel.gif', content_type: 'image/gif', data: btoa(String.fromCharCode(...gif)), tags: ['c'] } });
  await client.GET('/v1/media', { params: { query: { folder: 'docs', tag: 'a', limit: 10 } } });
  await client.GET('/v1/media/{id}', { params: { path: { id: fileId } } });

  // datasets and ingest: a JSON array, one object, NDJSON, gzip NDJSON
  await client.POST('/v1/datasets', { body: { name: 'typed', retention_days: 7, default_severity: 'info' } });
  await client.GET('/v1/datasets');
  const name = { path: { name: 'typed' } };
  const events: IngestJson = [
    { ts: '2026-01-01T00:00:00.000Z', severity: 'warn', event: 'match.start', actor: 'p1', payload: { map: 'dust' } },
    { ts: 1767225600000, severity: 17, message: 'error by OpenTelemetry number', region: 'eu' },
  ];
  await client.POST('/v1/datasets/{name}/ingest', { params: name, body: events });
  await client.POST('/v1/datasets/{name}/ingest', { params: name, body: { event: 'one.object' } });
  const ndjson = '{"event":"line.one"}\n{"event":"line.two","severity":"debug"}\n';
  await client.POST('/v1/datasets/{name}/ingest', {
    params: name,
    body: ndjson,
    bodySerializer: (body) => body,
    headers: { 'Content-Type': 'application/x-ndjson' },
  });
  const compressed = await gzip(ndjson);
  await client.POST('/v1/datasets/{name}/ingest', {
    params: { ...name, header: { 'Content-Encoding': 'gzip' } },
    body: ndjson,
    bodySerializer: () => compressed,
    headers: { 'Content-Type': 'application/x-ndjson' },
  });
  // OTLP/HTTP logs, OTLP/JSON (the protobuf encoding: src/otlp's tests, with the OpenTelemetry SDK)
  await client.POST('/v1/otlp/v1/logs', {
    params: { header: { 'X-Ops-Dataset': 'typed' } },
    body: { resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: '1767225600000000000', severityNumber: 13, body: { stringValue: 'otlp' } }] }] }] },
  });
  // The shipper routes (docs/shippers.md; their real clients: src/shippers's tests): Loki push (JSON), the bulk API
  await client.POST('/v1/loki/api/v1/push', { body: { streams: [{ stream: { dataset: 'typed' }, values: [['1767225600000000000', 'loki line']] }] } });
  await client.GET('/v1/elastic');
  const bulk = '{"index":{"_index":"typed"}}\n{"message":"bulk"}\n';
  await client.POST('/v1/elastic/_bulk', { body: bulk, bodySerializer: (body) => body, headers: { 'Content-Type': 'application/x-ndjson' } });
  await client.POST('/v1/elastic/{index}/_bulk', {
    params: { path: { index: 'typed' } },
    body: bulk,
    bodySerializer: (body) => body,
    headers: { 'Content-Type': 'application/x-ndjson' },
  });
  await client.GET('/v1/datasets/{name}/schema', { params: name });
  await client.PATCH('/v1/datasets/{name}', { params: name, body: { retention_days: 7, default_severity: null } });

  // query and live tail (the stream is opened, then closed at once)
  await client.POST('/v1/query', { body: { q: 'dataset:typed AND severity >= debug' } });
  const tail = await client.POST('/v1/query/tail', { body: { q: '' }, parseAs: 'stream' });
  await tail.response.body?.cancel();

  // saved searches
  const saved = await client.POST('/v1/searches', { body: { name: 'typed client', q: 'dataset:typed', range: { last: '24h' } } });
  const searchId = { path: { id: saved.data?.id ?? 'ss_unknown' } };
  await client.GET('/v1/searches', { params: { query: { limit: 5 } } });
  await client.GET('/v1/searches/{id}', { params: searchId });
  await client.PATCH('/v1/searches/{id}', { params: searchId, body: { range: { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' } } });
  await client.DELETE('/v1/searches/{id}', { params: searchId });

  // single sign-on: no provider answers here, so PUT is a 400 naming the issuer; the rest 404
  const sso = { path: { orgId: target.orgId } };
  await client.PUT('/v1/orgs/{orgId}/sso', { params: sso, body: { issuer: 'http://127.0.0.1:9/', client_id: 'typed', client_secret: 'typed-secret', email_domains: ['typed.example'], default_role: 'Viewer', enforce: false } });
  await client.GET('/v1/orgs/{orgId}/sso', { params: sso });
  await client.POST('/v1/orgs/{orgId}/sso/test', { params: sso });
  await client.POST('/v1/orgs/{orgId}/sso/domains/{domain}/verify', { params: { path: { orgId: target.orgId, domain: 'typed.example' } } });
  await client.DELETE('/v1/orgs/{orgId}/sso', { params: sso });

  // logs, cases, apps
  const log = await client.POST('/v1/logs', { body: { level: 'info', message: 'typed', meta: { k: 1 } } });
  await client.GET('/v1/logs', { params: { query: { level: 'info', limit: 10 } } });
  await client.GET('/v1/logs/{id}', { params: { path: { id: log.data?.id ?? 'log_unknown' } } });
  const created = await client.POST('/v1/cases', { body: { title: 'typed', description: 'from the typed client' } });
  const caseId = { path: { id: created.data?.id ?? 'cas_unknown' } };
  await client.GET('/v1/cases', { params: { query: { status: 'open' } } });
  await client.GET('/v1/cases/{id}', { params: caseId });
  await client.PATCH('/v1/cases/{id}', { params: caseId, body: { status: 'closed' } });
  await client.POST('/v1/cases/{id}/attachments', { params: caseId, body: { file_id: fileId } });
  const app = await client.POST('/v1/apps', { body: { name: 'typed', description: 'from the typed client' } });
  await client.GET('/v1/apps');
  await client.GET('/v1/apps/{id}', { params: { path: { id: app.data?.id ?? 'app_unknown' } } });

  // last: what removes things the calls above use; the deleted file is listed as such, restored, deleted again
  await client.DELETE('/v1/media/{id}', { params: { path: { id: fileId } } });
  const deleted = await client.GET('/v1/media', { params: { query: { deleted: true, limit: 10 } } });
  const restorable = deleted.data?.files.find((f) => f.deleted === true && f.purges_at !== undefined)?.id ?? 'f_unknown';
  await client.POST('/v1/media/{id}/restore', { params: { path: { id: restorable } } });
  await client.DELETE('/v1/media/{id}', { params: { path: { id: fileId } } });
  await client.DELETE('/v1/datasets/{name}', { params: name });
}
