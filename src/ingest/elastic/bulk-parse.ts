import { isAscii } from 'node:buffer';
import { ingestLimits } from '../core/limits.js';

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
  // All ASCII (what shippers send, mostly): a line's length is its size in bytes.
  const ascii = isAscii(body);
  const items: BulkItem[] = [];
  let start = 0;
  const nextLine = (): string | undefined => {
    while (start < text.length) {
      let end = text.indexOf('\n', start);
      if (end === -1) end = text.length;
      let line = text.slice(start, end);
      start = end + 1;
      if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
      // A line that starts with a printable ASCII character is not blank; any other goes by trim() (as JS counts white space).
      const first = line.charCodeAt(0);
      if ((first > 32 && first < 127) || line.trim() !== '') return line;
    }
    return undefined;
  };
  // Shippers repeat one action line (`{"create":{}}`, `{"index":{"_index":"logs"}}`): read once.
  let lastText: string | undefined;
  let last: ActionLine | undefined;
  for (let line = nextLine(); line !== undefined; line = nextLine()) {
    if (items.length >= ingestLimits.events) throw new BulkTooLarge(`a bulk request may carry at most ${ingestLimits.events} actions; send smaller batches`);
    if (line !== lastText || last === undefined) {
      lastText = line;
      last = readActionLine(line, urlIndex);
    }
    const { action, index, id, problem } = last;
    const item: BulkItem = { action: action || 'index', index, id, bytes: 0 };
    items.push(item);
    if (action === 'delete') {
      item.error = { status: 400, type: 'illegal_argument_exception', reason: 'delete is not supported: stored events cannot be removed through the bulk API' };
      continue;
    }
    const source = nextLine();
    if (problem) {
      item.error = { ...problem };
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
    item.bytes = ascii ? source!.length : Buffer.byteLength(source!);
  }
  if (items.length === 0) throw new BulkEmpty('request body is required');
  return items;
}

/** An action line read: the action's name ('' when the line is not one), its index and id, and why its item fails (but for `delete`). */
interface ActionLine {
  action: string;
  index: string;
  id: string | undefined;
  problem: BulkItem['error'];
}

function readActionLine(line: string, urlIndex: string | undefined): ActionLine {
  const actionLine = jsonObject(line);
  let action = '';
  if (actionLine) {
    // The one key, without listing the keys (Object.keys makes an array per line).
    let keys = 0;
    for (const key in actionLine) {
      if (++keys > 1) break;
      action = key;
    }
    if (keys !== 1) action = '';
  }
  const meta = action ? actionLine![action] : undefined;
  const metaObject = typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {};
  const index = typeof metaObject._index === 'string' && metaObject._index !== '' ? metaObject._index : (urlIndex ?? '');
  const rawId = metaObject._id;
  const id = typeof rawId === 'string' || typeof rawId === 'number' ? String(rawId) : undefined;
  let problem: BulkItem['error'];
  if (!actionLine || !action || (meta !== undefined && typeof meta !== 'object')) {
    problem = { status: 400, type: 'illegal_argument_exception', reason: `malformed action line: expected one JSON object such as {"index":{"_index":"games"}}, got ${JSON.stringify(line.slice(0, 100))}` };
  } else if (refused.has(action)) {
    problem = { status: 400, type: 'illegal_argument_exception', reason: `${action} is not supported: stored events cannot change; use index or create` };
  } else if (!stored.has(action)) {
    problem = { status: 400, type: 'illegal_argument_exception', reason: `unknown action [${action}]: use index or create` };
  } else if (!index) {
    problem = { status: 400, type: 'action_request_validation_exception', reason: 'Validation Failed: 1: index is missing;' };
  }
  return { action, index, id, problem };
}
