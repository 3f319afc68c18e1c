// SOQL's syntax highlighting for CodeMirror 6: a stream tokenizer over the server's lexer in its
// two modes (after an operator or inside `in (…)` a word is a value, elsewhere a field path)
// and class names for the tokens, coloured in explorer.css (no injected theme).
import { StreamLanguage, syntaxHighlighting } from '@codemirror/language';
import { tagHighlighter, tags } from '@lezer/highlight';
import { canonicalFields, severities, statsFunctions } from './soql-text';
import { lexNormal, lexValue } from '../../../../src/soql/lexer.js';

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

const OPERATORS = new Set([':', '!:', '==', '!=', '>', '>=', '<', '<=']);

export const soqlLanguage = StreamLanguage.define<State>({
  name: 'soql',
  startState: () => ({ value: false, list: -1, depth: 0, pendingList: false, bin: false }),
  token(stream, state) {
    if (stream.eatSpace()) return null;
    // The server's lexer (src/soql/lexer.ts), lenient: it reads the line being typed on, whatever it holds.
    const t = state.value || state.list >= 0 ? lexValue(stream.string, stream.pos, true) : lexNormal(stream.string, stream.pos, true);
    if (t.kind === 'eof') {
      stream.skipToEnd();
      return null;
    }
    stream.pos = t.end;
    switch (t.kind) {
      case 'string':
        state.value = false;
        return 'string';
      case 'lparen':
        state.depth++;
        if (state.pendingList) state.list = state.depth;
        state.pendingList = false;
        state.value = false;
        return 'paren';
      case 'rparen':
        if (state.list === state.depth) state.list = -1;
        state.depth = Math.max(0, state.depth - 1);
        state.value = false;
        state.bin = false;
        return 'paren';
      case 'comma':
        return 'separator';
      case 'bare':
        state.value = false;
        return valueStyle(t.text);
      case 'op':
        state.value = true;
        state.pendingList = false;
        return OPERATORS.has(t.text) ? 'operator' : 'invalid';
      case 'path': {
        const bare = t.segments.length === 1 && !t.segments[0]!.quoted;
        const lower = stream.string.slice(t.pos, t.end).toLowerCase();
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
      case 'other':
        return 'invalid';
    }
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
