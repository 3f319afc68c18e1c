import { multipart, png } from '../media/test-files.js';

/**
 * The keyed endpoints as tests drive them: a request body per variant (the same variant gives
 * the same bytes: a retry), and what its answer's identity is (the ids a retry must repeat).
 */
export interface KeyedRoute {
  name: string;
  method: 'POST';
  /** Under /v1. */
  path: string;
  /** The status of a success. */
  status: number;
  /** Body and headers of variant `v` (same `v`, same bytes). */
  body(v: string): { body: Uint8Array<ArrayBuffer>; contentType: string };
  /** What a retry's answer must repeat. */
  identity(answer: Record<string, unknown>): unknown;
  /** The body names something unique in the project: the same body run again is a 409 from the endpoint. */
  uniqueName?: true;
}

const json = (value: unknown) => ({ body: new Uint8Array(Buffer.from(JSON.stringify(value))), contentType: 'application/json' });

/** One 1×1 PNG whose bytes differ per variant (a tEXt-free trailer after IEND is not read by anyone). */
const pngFor = (v: string) => Buffer.concat([png(), Buffer.from(v)]);

const multipartBodies = new Map<string, { body: Uint8Array<ArrayBuffer>; contentType: string }>();

export const keyedRoutes = (dataset: string): KeyedRoute[] => [
  {
    name: 'POST /tokens',
    method: 'POST',
    path: '/tokens',
    status: 201,
    body: (v) => json({ name: `token-${v}`, scopes: ['media:read'] }),
    identity: (a) => [a.id, a.token],
  },
  {
    name: 'POST /datasets',
    method: 'POST',
    path: '/datasets',
    status: 201,
    body: (v) => json({ name: `ds-${v}`.toLowerCase().replace(/[^a-z0-9_-]/g, '-').slice(0, 64) }),
    identity: (a) => [a.name, a.created_at],
    uniqueName: true,
  },
  {
    name: 'POST /media/base64',
    method: 'POST',
    path: '/media/base64',
    status: 201,
    body: (v) => json({ filename: `b64-${v}.png`, content_type: 'image/png', data: pngFor(v).toString('base64') }),
    identity: (a) => [a.id, a.key],
  },
  {
    name: 'POST /media (multipart)',
    method: 'POST',
    path: '/media',
    status: 201,
    body: (v) => {
      // Built once per variant: the boundary is random, and a retry sends the same bytes.
      let m = multipartBodies.get(v);
      if (!m) {
        const built = multipart([
          { name: 'folder', value: 'idem' },
          { name: 'file', value: pngFor(v), filename: `mp-${v}.png`, type: 'image/png' },
        ]);
        m = { body: new Uint8Array(built.body), contentType: built.contentType };
        multipartBodies.set(v, m);
      }
      return m;
    },
    identity: (a) => [a.id, a.key],
  },
  {
    name: 'POST /datasets/{name}/ingest',
    method: 'POST',
    path: `/datasets/${dataset}/ingest`,
    status: 200,
    body: (v) => json([{ event: 'idem', message: `${v}-0` }, { event: 'idem', message: `${v}-1` }, { severity: 'nonsense', message: `${v}-bad` }]),
    identity: (a) => a,
  },
];

/**
 * The settings a client creates and would retry after a timeout (beyond DECISIONS.md §16's five):
 * a monitor, a channel (whose signing secret is shown once, so its replay is what the client
 * gets back), a saved search. Names carry the variant, so a test counts the rows it made.
 */
export const keyedSettingsRoutes = (): KeyedRoute[] => [
  {
    name: 'POST /monitors',
    method: 'POST',
    path: '/monitors',
    status: 201,
    body: (v) => json({ name: `monitor-${v}`, kind: 'match', q: 'event:idem', channel_ids: [] }),
    identity: (a) => [a.id, a.created_at],
  },
  {
    name: 'POST /channels',
    method: 'POST',
    path: '/channels',
    status: 201,
    body: (v) => json({ name: `channel-${v}`, kind: 'webhook', url: 'http://127.0.0.1:9/ops' }),
    identity: (a) => [a.id, a.signing_secret],
  },
  {
    name: 'POST /searches',
    method: 'POST',
    path: '/searches',
    status: 201,
    body: (v) => json({ name: `search-${v}`, q: 'severity >= error' }),
    identity: (a) => [a.id, a.created_at],
    uniqueName: true,
  },
];

/** The table and name column that hold a settings route's rows. */
export const settingsTables: Record<string, 'monitors' | 'channels' | 'saved_searches'> = { '/monitors': 'monitors', '/channels': 'channels', '/searches': 'saved_searches' };
