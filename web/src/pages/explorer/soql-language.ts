// SOQL's syntax highlighting for CodeMirror 6: a stream tokenizer (SOQL.md's grammar, with the
// lexer's two modes: after an operator or inside `in (…)` a word is a value, elsewhere a field
// path) and class names for the tokens, coloured in explorer.css (no injected theme).
import { StreamLanguage, syntaxHighlighting, type StringStream } from '@codemirror/language';
import { tagHighlighter, tags } from '@lezer/highlight';
import { canonicalFields, severities, statsFunctions } from './soql-text';

interface State {
  /** the next word is a value (after an operator) */
  value: boolean;
  /** parenthesis depth of an open `in (` list, -1 when none */
  list: number;
  depth: number;
  /** `in` was the last word: its '(' opens a value list */
  pendingList: boolean;
  /** inside `bin(`: the next word is a duration */
  bin: boolean;
}

const NUMBER = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const TIME = /^(?:now|(?:now)?-\d+[smhdw]|\d{4}-\d{2}-\d{2}(?:[Tt][\d:.,]+(?:[Zz]|[+-]\d{2}:?\d{2})?)?)$/i;
const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'exists', 'group', 'by', 'stats']);
const FUNCTIONS = new Set<string>([...statsFunctions, 'bin']);
const CANONICAL = new Set<string>(canonicalFields);
const SEVERITIES = new Set<string>(severities);

function valueStyle(text: string): string {
  const lower = text.toLowerCase();
  if (NUMBER.test(text)) return 'number';
  if (lower === 'true' || lower === 'false') return 'bool';
  if (lower === 'null') return 'null';
  if (TIME.test(text) || SEVERITIES.has(lower)) return 'atom';
  return 'string.special';
}

function readString(stream: StringStream): void {
  stream.next(); // the opening quote
  while (!stream.eol()) {
    const ch = stream.next();
    if (ch === '\\') stream.next();
    else if (ch === '"') return;
  }
}

/** A path: keys (bare or `backquoted`) joined by dots. Returns whether it was one bare word. */
function readPath(stream: StringStream): boolean {
  let segments = 0;
  let quoted = false;
  for (;;) {
    segments++;
    if (stream.peek() === '`') {
      quoted = true;
      stream.next();
      while (!stream.eol()) {
        if (stream.next() === '`') {
          if (stream.peek() !== '`') break;
          stream.next();
        }
      }
    } else {
      stream.eatWhile(/[A-Za-z0-9_@$-]/);
    }
    if (!stream.match(/^\.(?=[A-Za-z0-9_@$`-])/)) break;
  }
  return segments === 1 && !quoted;
}

export const soqlLanguage = StreamLanguage.define<State>({
  name: 'soql',
  startState: () => ({ value: false, list: -1, depth: 0, pendingList: false, bin: false }),
  token(stream, state) {
    if (stream.eatSpace()) return null;
    const ch = stream.peek() ?? '';
    if (ch === '"') {
      readString(stream);
      state.value = false;
      return 'string';
    }
    if (ch === '(') {
      stream.next();
      state.depth++;
      if (state.pendingList) state.list = state.depth;
      state.pendingList = false;
      state.value = false;
      return 'paren';
    }
    if (ch === ')') {
      stream.next();
      if (state.list === state.depth) state.list = -1;
      state.depth = Math.max(0, state.depth - 1);
      state.value = false;
      state.bin = false;
      return 'paren';
    }
    if (ch === ',') {
      stream.next();
      return 'separator';
    }
    if (state.value || state.list >= 0) {
      const word = stream.match(/^[^\s()",]+/) as RegExpMatchArray | null;
      state.value = false;
      return word ? valueStyle(word[0]) : (stream.next(), 'invalid');
    }
    if (/[:!=<>]/.test(ch)) {
      const op = (stream.match(/^[:!=<>]+/) as RegExpMatchArray)[0];
      state.value = true;
      state.pendingList = false;
      return [':', '!:', '==', '!=', '>', '>=', '<', '<='].includes(op) ? 'operator' : 'invalid';
    }
    if (ch === '`' || /[A-Za-z0-9_@$-]/.test(ch)) {
      const start = stream.pos;
      const bare = readPath(stream);
      const text = stream.string.slice(start, stream.pos);
      const lower = text.toLowerCase();
      state.pendingList = false;
      if (state.bin) {
        state.bin = false;
        return 'atom';
      }
      if (bare && FUNCTIONS.has(lower) && stream.match(/^\s*\(/, false)) {
        state.bin = lower === 'bin';
        return 'variableName.function';
      }
      if (bare && KEYWORDS.has(lower)) {
        state.pendingList = lower === 'in';
        return 'keyword';
      }
      const head = lower.split('.')[0] ?? '';
      return bare && CANONICAL.has(lower) ? 'propertyName' : head === 'payload' || !CANONICAL.has(head) ? 'propertyName.special' : 'propertyName';
    }
    stream.next();
    return 'invalid';
  },
  languageData: { closeBrackets: { brackets: ['(', '"', '`'] } },
});

/** Token classes (`tok-…`), coloured by explorer.css: no styles injected at run time. */
export const soqlHighlighting = syntaxHighlighting(
  tagHighlighter([
    { tag: tags.keyword, class: 'tok-keyword' },
    { tag: tags.function(tags.variableName), class: 'tok-function' },
    { tag: tags.special(tags.propertyName), class: 'tok-payload' },
    { tag: tags.propertyName, class: 'tok-field' },
    { tag: tags.special(tags.string), class: 'tok-bare' },
    { tag: tags.string, class: 'tok-string' },
    { tag: tags.number, class: 'tok-number' },
    { tag: [tags.atom, tags.bool, tags.null], class: 'tok-atom' },
    { tag: tags.operator, class: 'tok-operator' },
    { tag: tags.invalid, class: 'tok-invalid' },
  ]),
);
