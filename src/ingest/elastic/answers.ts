import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorEnvelope } from '../core/wire-body.js';
import type { BulkItem } from './bulk-parse.js';

/** The Elasticsearch version GET / reports: clients that read it (Vector, Filebeat, Logstash) take the 8.x API. */
export const reportedVersion = '8.17.0';

/** GET / of Elasticsearch: enough for clients that check the product and the version to proceed. */
export function clusterInfo() {
  return {
    name: 'opsplatform',
    cluster_name: 'opsplatform',
    cluster_uuid: 'opsplatform',
    version: {
      number: reportedVersion,
      build_flavor: 'default',
      build_type: 'opsplatform',
      build_hash: 'opsplatform',
      build_date: '2026-01-01T00:00:00.000Z',
      build_snapshot: false,
      lucene_version: '9.12.0',
      minimum_wire_compatibility_version: '7.17.0',
      minimum_index_compatibility_version: '7.0.0',
    },
    tagline: 'You Know, for Search',
  };
}

/** Our error codes (DECISIONS §5) → the `type` Elasticsearch gives a failure of that kind. */
const errorTypes: Record<string, string> = {
  bad_request: 'parse_exception',
  unauthorized: 'security_exception',
  forbidden: 'security_exception',
  not_found: 'resource_not_found_exception',
  conflict: 'index_closed_exception',
  too_large: 'content_too_long_exception',
  unsupported_type: 'media_type_header_exception',
  quota_exceeded: 'cluster_block_exception',
  rate_limited: 'es_rejected_execution_exception',
  storage_error: 'unavailable_shards_exception',
  internal: 'exception',
};

/** Elasticsearch's error body: `{error: {root_cause: [{type, reason}], type, reason}, status}`. */
export function elasticError(status: number, type: string, reason: string, extra: Record<string, unknown> = {}) {
  return { error: { root_cause: [{ type, reason }], type, reason, ...extra }, status };
}

/** Under /v1/elastic every answer carries `X-Elastic-Product: Elasticsearch`: the official clients refuse a server without it. */
export function elasticProductHeader(_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload?: unknown) => void): void {
  reply.header('X-Elastic-Product', 'Elasticsearch');
  done(null, payload);
}

/**
 * An error envelope the error handler wrote (DECISIONS §5) → Elasticsearch's error body, same
 * status and headers; our code and the request id stay in it as `code` and `request_id`. A body
 * already in Elasticsearch's shape (`root_cause`) stays as it is.
 */
export function elasticErrorBody(error: ErrorEnvelope, _request: FastifyRequest, reply: FastifyReply): string | undefined {
  if (typeof error.code !== 'string' || 'root_cause' in error) return undefined;
  const { code, message, ...extra } = error;
  return JSON.stringify(elasticError(reply.statusCode, errorTypes[code] ?? 'exception', String(message), { code, ...extra }));
}

/** The rest of a stored item's answer, after `_index` and `_id`: as Elasticsearch answers a new document. */
const created = Buffer.from(',"_version":1,"result":"created","_shards":{"total":1,"successful":1,"failed":0},"_seq_no":0,"_primary_term":1,"status":201}}');

/** A string JSON.stringify writes as it is between quotes: printable ASCII without `"` and `\`. */
function plain(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 34 || c === 92) return false;
  }
  return true;
}

/**
 * The bulk answer, `{"took":…,"errors":…,"items":[{"<action>":{"_index":…,"_id":…,…}},…]}`, one
 * item per action in order: a stored one as Elasticsearch answers a created document, a failed
 * one with its status and error. `_id` is the action's, else the stored event's id, else null.
 * Written into one buffer (each action and index's head encoded once, an id copied as it is when
 * it needs no escape): built as strings, then joined and encoded, the answer of 1,000 items cost
 * more than parsing them. The same bytes as the JSON text built directly.
 */
export function bulkAnswer(items: readonly Pick<BulkItem, 'action' | 'index' | 'id' | 'error'>[], eventIds: readonly (string | undefined)[], took: number): Buffer {
  const uniform = uniformAnswer(items, eventIds, took);
  if (uniform) return uniform;
  const heads = new Map<string, Buffer>();
  const itemHeads: Buffer[] = new Array<Buffer>(items.length);
  const ids: string[] = new Array<string>(items.length);
  /** 0: `ids[i]` is the JSON text itself (null, an escaped id); else the id's length, copied between quotes. */
  const plainIds: number[] = new Array<number>(items.length);
  const failures: Array<Buffer | undefined> = new Array<Buffer | undefined>(items.length);
  let errors = false;
  let size = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i]!;
    // Items repeat one action and index: the previous item's head, else the one of that pair.
    let head: Buffer | undefined;
    if (i > 0 && item.action === items[i - 1]!.action && item.index === items[i - 1]!.index) head = itemHeads[i - 1]!;
    else {
      const key = `${item.action}\u0000${item.index}`;
      head = heads.get(key);
      if (head === undefined) heads.set(key, (head = Buffer.from(`{${JSON.stringify(item.action)}:{"_index":${JSON.stringify(item.index)},"_id":`)));
    }
    itemHeads[i] = head;
    const id = item.id ?? eventIds[i];
    let idJson: string;
    let idBytes: number;
    if (id !== undefined && plain(id)) {
      idJson = id;
      idBytes = id.length + 2;
      plainIds[i] = 1;
    } else {
      idJson = id === undefined ? 'null' : JSON.stringify(id);
      idBytes = Buffer.byteLength(idJson);
      plainIds[i] = 0;
    }
    ids[i] = idJson;
    let tail = created.length;
    if (item.error) {
      errors = true;
      const failure = Buffer.from(`,"status":${item.error.status},"error":{"type":${JSON.stringify(item.error.type)},"reason":${JSON.stringify(item.error.reason)}}}}`);
      failures[i] = failure;
      tail = failure.length;
    }
    size += head.length + idBytes + tail + 1;
  }
  const start = `{"took":${took},"errors":${errors},"items":[`;
  const out = Buffer.allocUnsafe(start.length + size + 2);
  let at = out.write(start, 0, 'latin1');
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out[at++] = 44; // ,
    const head = itemHeads[i]!;
    out.set(head, at);
    at += head.length;
    if (plainIds[i]) {
      out[at++] = 34; // "
      at += out.write(ids[i]!, at, 'latin1');
      out[at++] = 34;
    } else at += out.write(ids[i]!, at, 'utf8');
    const tail = failures[i] ?? created;
    out.set(tail, at);
    at += tail.length;
  }
  out[at++] = 93; // ]
  out[at++] = 125; // }
  return out.subarray(0, at);
}

/**
 * The answer of a bulk whose every item was stored under one action and index with ids of one
 * length that need no escape (what a shipper sends without `_id`s: each id is a stored event's
 * UUID), else undefined. Every item is then the same bytes but its id: the items are written by
 * one fill with the first item's bytes, and only each id copied in, character by character (a
 * Buffer write per id cost more than the copy). The bytes bulkAnswer writes otherwise.
 */
function uniformAnswer(items: readonly Pick<BulkItem, 'action' | 'index' | 'id' | 'error'>[], eventIds: readonly (string | undefined)[], took: number): Buffer | undefined {
  const n = items.length;
  if (n === 0) return undefined;
  const { action, index } = items[0]!;
  const idLength = (items[0]!.id ?? eventIds[0])?.length;
  if (idLength === undefined) return undefined;
  for (let i = 0; i < n; i++) {
    const item = items[i]!;
    if (item.error || item.action !== action || item.index !== index || (item.id ?? eventIds[i])?.length !== idLength) return undefined;
  }
  const head = Buffer.from(`{${JSON.stringify(action)}:{"_index":${JSON.stringify(index)},"_id":"`);
  // One item and the comma after it: head, id, closing quote, the rest of a created item.
  const stride = head.length + idLength + 1 + created.length + 1;
  const start = `{"took":${took},"errors":false,"items":[`;
  const out = Buffer.allocUnsafe(start.length + n * stride + 1);
  out.write(start, 0, 'latin1');
  const template = Buffer.allocUnsafe(stride);
  head.copy(template, 0);
  template[head.length + idLength] = 34; // "
  created.copy(template, head.length + idLength + 1);
  template[stride - 1] = 44; // ,
  out.fill(template, start.length, start.length + n * stride);
  for (let i = 0, at = start.length + head.length; i < n; i++, at += stride) {
    const id = (items[i]!.id ?? eventIds[i])!;
    for (let k = 0; k < idLength; k++) {
      const c = id.charCodeAt(k);
      if (c < 0x20 || c > 0x7e || c === 34 || c === 92) return undefined;
      out[at + k] = c;
    }
  }
  // The last item's comma is the list's end.
  out[start.length + n * stride - 1] = 93; // ]
  out[start.length + n * stride] = 125; // }
  return out;
}
