import { ingestLimits } from '../../events/ingest-parse.js';

/** One action of a bulk body, with its document or why it cannot be stored. */
export interface BulkItem {
  /** The action's name as sent (`index`, `create`, or what the item failed for). */
  action: string;
  /** The index it names (or the URL's); '' when neither names one. */
  index: string;
  /** `_id` as sent; undefined when the action has none. */
  id: string | undefined;
  document?: Record<string, unknown>;
  /** The document line's size in bytes (bytes_raw, and the 256 KB bound). */
  bytes: number;
  /** Set when the item fails before it reaches the write path. */
  error?: { status: number; type: string; reason: string };
}

export class BulkTooLarge extends Error {}
export class BulkEmpty extends Error {}

const stored = new Set(['index', 'create']);
/** Actions Elasticsearch knows that change stored documents: refused here, item by item (events are immutable). */
const refused = new Set(['update', 'delete']);

function jsonObject(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The bulk API's NDJSON body (Elasticsearch's `_bulk`): an action line, then for every action but
 * `delete` its source line. `index` and `create` store their document. Anything else fails as
 * its own item with Elasticsearch's error shape, never the request: `update` and `delete`
 * (events cannot change), an unknown action, an action line or a document that is not a JSON
 * object. A line that cannot be read as an action is taken as an action with its document
 * after it, so one bad pair costs one item. Blank lines are skipped; CRLF is accepted.
 */
export function parseBulk(body: Buffer, urlIndex: string | undefined): BulkItem[] {
  const text = body.toString('utf8');
  const items: BulkItem[] = [];
  let start = 0;
  const nextLine = (): string | undefined => {
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end === -1) end = text.length;
      let line = text.slice(start, end);
      start = end + 1;
      if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
      if (line.trim() !== '') return line;
    }
    return undefined;
  };
  // Shippers repeat one action line (`{"create":{}}`, `{"index":{"_index":"logs"}}`): parsed once.
  let lastText = '';
  let lastAction: Record<string, unknown> | undefined;
  for (let line = nextLine(); line !== undefined; line = nextLine()) {
    if (items.length >= ingestLimits.events) throw new BulkTooLarge(`a bulk request may carry at most ${ingestLimits.events} actions; send smaller batches`);
    if (line !== lastText) {
      lastText = line;
      lastAction = jsonObject(line);
    }
    const actionLine = lastAction;
    const keys = actionLine ? Object.keys(actionLine) : [];
    const action = keys.length === 1 ? keys[0]! : '';
    const meta = action ? actionLine![action] : undefined;
    const metaObject = typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {};
    const index = typeof metaObject._index === 'string' && metaObject._index !== '' ? metaObject._index : (urlIndex ?? '');
    const rawId = metaObject._id;
    const id = typeof rawId === 'string' || typeof rawId === 'number' ? String(rawId) : undefined;
    const item: BulkItem = { action: action || 'index', index, id, bytes: 0 };
    items.push(item);
    if (action === 'delete') {
      item.error = { status: 400, type: 'illegal_argument_exception', reason: 'delete is not supported: stored events cannot be removed through the bulk API' };
      continue;
    }
    const source = nextLine();
    if (!actionLine || !action || (meta !== undefined && typeof meta !== 'object')) {
      item.error = { status: 400, type: 'illegal_argument_exception', reason: `malformed action line: expected one JSON object such as {"index":{"_index":"games"}}, got ${JSON.stringify(line.slice(0, 100))}` };
      continue;
    }
    if (refused.has(action)) {
      item.error = { status: 400, type: 'illegal_argument_exception', reason: `${action} is not supported: stored events cannot change; use index or create` };
      continue;
    }
    if (!stored.has(action)) {
      item.error = { status: 400, type: 'illegal_argument_exception', reason: `unknown action [${action}]: use index or create` };
      continue;
    }
    if (!index) {
      item.error = { status: 400, type: 'action_request_validation_exception', reason: 'Validation Failed: 1: index is missing;' };
      continue;
    }
    const document = source === undefined ? undefined : jsonObject(source);
    if (!document) {
      item.error = {
        status: 400,
        type: 'document_parsing_exception',
        reason: source === undefined ? 'the action has no document line after it' : 'failed to parse: the document is not a JSON object',
      };
      continue;
    }
    item.document = document;
    item.bytes = Buffer.byteLength(source!);
  }
  if (items.length === 0) throw new BulkEmpty('request body is required');
  return items;
}
