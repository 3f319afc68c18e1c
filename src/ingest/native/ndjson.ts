import { isAscii } from 'node:buffer';
import { AppError, badRequest, tooLarge } from '../../errors/app-error.js';
import type { NewEvent } from '../../engine/event-store.js';
import { ingestLimits } from '../core/limits.js';
import { fail, normalise, tooLargeFailure, type IngestDefaults, type IngestFailure, type ParsedIngest } from '../core/normalise.js';

/**
 * Native ingest's framing (DECISIONS §9): an NDJSON body line by line, or a JSON body (an array
 * of events or one event), each event mapped by the one normalisation (core/normalise.ts).
 */

/** NDJSON: each non-blank line is an event; a malformed line fails alone, with its index. */
export function parseNdjson(buffer: Buffer, d: IngestDefaults): ParsedIngest {
  const text = buffer.toString('utf8');
  // ASCII: a line's characters are its bytes. Else each line's bytes are counted in the body as
  // sent (a byte 0x0a is a line break in UTF-8 and nothing else, so the text's lines are the
  // body's): counting the decoded text would count an invalid byte as U+FFFD's three.
  const ascii = isAscii(buffer);
  let byteStart = 0;
  const events: NewEvent[] = [];
  const failures: IngestFailure[] = [];
  let index = 0;
  let syntaxErrors = 0;
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    let lineEnd = end;
    if (lineEnd > start && text.charCodeAt(lineEnd - 1) === 13) lineEnd--;
    const line = text.slice(start, lineEnd);
    start = end + 1;
    let bytes = line.length;
    if (!ascii) {
      const byteEnd = end === text.length ? buffer.length : buffer.indexOf(10, byteStart);
      bytes = byteEnd - byteStart - (lineEnd < end ? 1 : 0);
      byteStart = byteEnd + 1;
    }
    if (line.length === 0 || (line.charCodeAt(0) <= 32 && line.trim() === '')) continue;
    if (index >= ingestLimits.events) throw tooLarge(ingestLimits.bodyBytes, `a request may carry at most ${ingestLimits.events} events`);
    if (bytes > ingestLimits.eventBytes) {
      failures.push(tooLargeFailure(index++));
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      syntaxErrors++;
      failures.push({ index: index++, error: { code: 'bad_request', message: 'this line is not valid JSON' } });
      continue;
    }
    try {
      events.push(normalise(value, bytes, d));
    } catch (error) {
      fail(failures, index, error);
    }
    index++;
  }
  if (index === 0) throw badRequest('the request body holds no events');
  if (syntaxErrors === index) throw badRequest('the request body is not JSON or NDJSON');
  return { events, failures };
}

/** A body that failed JSON.parse: do its first two non-empty lines each hold a JSON object? */
function looksLikeNdjson(buffer: Buffer): boolean {
  const lines = buffer.toString('utf8', 0, Math.min(buffer.length, 2 * ingestLimits.eventBytes)).split('\n');
  let objects = 0;
  for (const line of lines) {
    if (!line.trim()) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
    } catch {
      return false;
    }
    if (++objects === 2) return true;
  }
  return false;
}

/** application/json: an array of events or one event object. */
export function parseJsonBody(buffer: Buffer, d: IngestDefaults): ParsedIngest {
  let value: unknown;
  try {
    value = JSON.parse(buffer.toString('utf8'));
  } catch {
    throw badRequest(
      looksLikeNdjson(buffer)
        ? 'the request body is one JSON object per line (NDJSON), not one JSON value: send it with Content-Type: application/x-ndjson'
        : 'the request body is not valid JSON',
    );
  }
  const single = !Array.isArray(value);
  if (single && (value === null || typeof value !== 'object')) throw badRequest('the body must be a JSON array of events or one event object');
  const items = single ? [value] : (value as unknown[]);
  if (items.length === 0) throw badRequest('the request body holds no events');
  if (items.length > ingestLimits.events) throw tooLarge(ingestLimits.bodyBytes, `a request may carry at most ${ingestLimits.events} events`);
  const events: NewEvent[] = [];
  const failures: IngestFailure[] = [];
  // JSON.parse builds any depth; nothing serialises an element before normalise has bounded
  // its shape (an element's size is measured there, by serialising it).
  items.forEach((item, index) => {
    if (single && buffer.length > ingestLimits.eventBytes) {
      failures.push(tooLargeFailure(index));
      return;
    }
    try {
      events.push(normalise(item, single ? buffer.length : -1, d));
    } catch (error) {
      fail(failures, index, error);
    }
  });
  return { events, failures };
}

export type BodyFormat = 'json' | 'ndjson';

/** The body format from Content-Type; anything else is 415. */
export function bodyFormat(contentType: string | undefined): BodyFormat {
  const type = (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  if (['application/x-ndjson', 'application/ndjson', 'application/jsonl', 'application/x-jsonlines', 'application/jsonlines'].includes(type)) {
    return 'ndjson';
  }
  if (type === 'application/json' || type.endsWith('+json') || type === '') return 'json';
  throw new AppError('unsupported_type', `content type ${type} is not accepted here; send application/json or application/x-ndjson`);
}
