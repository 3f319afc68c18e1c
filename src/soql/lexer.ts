/**
 * SOQL's lexer. It is context-sensitive on purpose: after an operator the parser asks for a
 * *value* (`lexValue`), where `2024-05-01T10:00:00Z`, `eu-west-1`, `player.join` and `eu*` are
 * single words, while elsewhere it asks for ordinary tokens (`lexNormal`), where a word is a
 * field path. Both are pure functions of (q, offset), so the parser can peek by re-lexing
 * instead of keeping a token buffer. Every loop advances at least one character, so lexing is
 * linear in the length of q.
 *
 * It imports nothing, so the explorer's editor (web/) runs it in the browser. There it reads
 * text being typed: `lenient` lexing never fails, and reads malformed text on as far as it can
 * (an unclosed string or backquote runs to the end; an unknown escape is read as if allowed; a
 * path ends before a `.` without a key; an unexpected character is an `other` token). Strict
 * lexing (the parser's) throws a LexError where lenient lexing recovers.
 */

export interface Segment {
  text: string;
  /** written in backquotes: never a keyword */
  quoted: boolean;
}

export type Token =
  | { kind: 'eof' | 'lparen' | 'rparen' | 'comma'; pos: number; end: number }
  /** A run of operator characters; the parser rejects runs that are not an operator. */
  | { kind: 'op'; text: string; pos: number; end: number }
  | { kind: 'string'; text: string; pos: number; end: number }
  /** Normal mode only: one or more keys joined by dots (`payload.a.b`, `` `odd key` ``). */
  | { kind: 'path'; segments: Segment[]; pos: number; end: number }
  /** Value mode only: an unquoted value. */
  | { kind: 'bare'; text: string; pos: number; end: number }
  /** Lenient lexing only: a character no token starts with. */
  | { kind: 'other'; pos: number; end: number };

/** Malformed text at `position` (0-based, UTF-16 code units); the parser reports it as soql_parse_error. */
export class LexError extends Error {
  constructor(
    readonly position: number,
    message: string,
  ) {
    super(message);
    this.name = 'LexError';
  }
}

const NEAR_LENGTH = 20;

/** The `near` of an error: up to 20 characters of q at `position`, never half a surrogate pair. */
export function nearText(q: string, position: number): string {
  let near = q.slice(position, position + NEAR_LENGTH);
  const last = near.charCodeAt(near.length - 1);
  if (near.length === NEAR_LENGTH && last >= 0xd800 && last <= 0xdbff) near = near.slice(0, -1);
  return near;
}

const WS = /\s/u;
export const isWhitespace = (ch: string): boolean => WS.test(ch);
const KEY_CHAR = /[A-Za-z0-9_@$-]/;
export const isKeyChar = (ch: string): boolean => KEY_CHAR.test(ch);
const OP_CHARS = ':!=<>';
/** Characters that end an unquoted value. */
const VALUE_STOP = '()",';

function skipWs(q: string, pos: number): number {
  while (pos < q.length && isWhitespace(q.charAt(pos))) pos++;
  return pos;
}

/** Quotes one character (a whole code point) for a message. */
function describeChar(q: string, pos: number): string {
  const cp = q.codePointAt(pos) ?? 0;
  const ch = String.fromCodePoint(cp);
  return cp < 0x20 || cp === 0x7f ? `U+${cp.toString(16).toUpperCase().padStart(4, '0')}` : `'${ch}'`;
}

function punct(q: string, pos: number, lenient: boolean): Token | null {
  if (pos >= q.length) return { kind: 'eof', pos, end: pos };
  const ch = q.charAt(pos);
  if (ch === '(') return { kind: 'lparen', pos, end: pos + 1 };
  if (ch === ')') return { kind: 'rparen', pos, end: pos + 1 };
  if (ch === ',') return { kind: 'comma', pos, end: pos + 1 };
  if (ch === '"') return readString(q, pos, lenient);
  return null;
}

export function lexNormal(q: string, from: number, lenient = false): Token {
  const pos = skipWs(q, from);
  const p = punct(q, pos, lenient);
  if (p) return p;
  const ch = q.charAt(pos);
  if (OP_CHARS.includes(ch)) {
    let end = pos;
    while (end < q.length && OP_CHARS.includes(q.charAt(end))) end++;
    return { kind: 'op', text: q.slice(pos, end), pos, end };
  }
  if (ch === '`' || isKeyChar(ch)) return readPath(q, pos, lenient);
  if (lenient) return { kind: 'other', pos, end: pos + 1 };
  throw new LexError(pos, `unexpected character ${describeChar(q, pos)}`);
}

export function lexValue(q: string, from: number, lenient = false): Token {
  const pos = skipWs(q, from);
  const p = punct(q, pos, lenient);
  if (p) return p;
  let end = pos;
  while (end < q.length && !VALUE_STOP.includes(q.charAt(end)) && !isWhitespace(q.charAt(end))) end++;
  return { kind: 'bare', text: q.slice(pos, end), pos, end };
}

/** `"…"` with `\"` and `\\` as the only escapes (SOQL.md). */
function readString(q: string, pos: number, lenient: boolean): Token {
  let text = '';
  let chunkStart = pos + 1;
  for (let i = pos + 1; i < q.length; i++) {
    const ch = q.charAt(i);
    if (ch === '"') return { kind: 'string', text: text + q.slice(chunkStart, i), pos, end: i + 1 };
    if (ch !== '\\') continue;
    const next = q.charAt(i + 1);
    if (next === '') break;
    if (next !== '"' && next !== '\\' && !lenient) {
      throw new LexError(i, `unknown escape ${describeChar(q, i + 1).replace(/^'/, "'\\")} in a string: only \\" and \\\\ are allowed`);
    }
    text += q.slice(chunkStart, i) + next;
    chunkStart = i + 2;
    i++;
  }
  if (lenient) return { kind: 'string', text: text + q.slice(chunkStart), pos, end: q.length };
  throw new LexError(pos, 'unclosed string starting here: add the closing "');
}

/** Keys joined by dots; a backquoted key may hold any text, with `` `` `` for a backquote. */
function readPath(q: string, pos: number, lenient: boolean): Token {
  const segments: Segment[] = [];
  let i = pos;
  for (;;) {
    if (q.charAt(i) === '`') {
      let text = '';
      let j = i + 1;
      for (;;) {
        if (j >= q.length) {
          if (lenient) return { kind: 'path', segments: [...segments, { text, quoted: true }], pos, end: q.length };
          throw new LexError(i, 'unclosed backquoted key starting here: add the closing `');
        }
        if (q.charAt(j) === '`') {
          if (q.charAt(j + 1) !== '`') break;
          text += '`';
          j += 2;
          continue;
        }
        text += q.charAt(j);
        j++;
      }
      if (text === '' && !lenient) throw new LexError(i, 'a backquoted key cannot be empty');
      segments.push({ text, quoted: true });
      i = j + 1;
    } else if (isKeyChar(q.charAt(i))) {
      const start = i;
      while (i < q.length && isKeyChar(q.charAt(i))) i++;
      segments.push({ text: q.slice(start, i), quoted: false });
    } else if (lenient) {
      return { kind: 'path', segments, pos, end: i - 1 };
    } else {
      throw new LexError(i, "expected a key after '.'");
    }
    if (q.charAt(i) !== '.') return { kind: 'path', segments, pos, end: i };
    i++;
  }
}
