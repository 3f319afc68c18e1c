// A small autocompletion for the SOQL editor, on CodeMirror's own tooltip (no @codemirror/
// autocomplete: a list of words is all SOQL needs here). What is offered depends on where the
// cursor is:
// - a field's place: keywords (AND, OR, NOT, group by, stats), the canonical fields and the
//   payload keys of the events shown (the `vocabulary`), as the word typed begins; after
//   `stats`, also the stats functions;
// - after a field and a space: the operators;
// - after `severity <op>`: the severities; after `dataset <op>`: the datasets shown.
// It opens while typing (fields and keywords once a character is typed, operators and values at
// once), filters as typing goes on, and closes when nothing fits, on Escape, a click elsewhere
// or leaving the editor. ↑/↓ choose, Enter or Tab take the choice, a click too.
// The list is a `cm-tooltip` inside the editor's shadow root, placed by CodeMirror through
// element.style (CSSOM, which the CSP allows); nothing here writes a style attribute.
import { Prec, StateEffect, StateField, type EditorState, type Extension } from '@codemirror/state';
import { EditorView, keymap, showTooltip, type Command, type Tooltip } from '@codemirror/view';
import { canonicalFields, severities, statsFunctions } from './soql-text.js';

export interface Vocabulary {
  /** payload paths as SOQL writes them (`payload.map`, ``payload.`odd key` ``) */
  payloadKeys: readonly string[];
  datasets: readonly string[];
}

type Kind = 'keyword' | 'field' | 'payload' | 'operator' | 'severity' | 'dataset' | 'function';

interface Option {
  label: string;
  kind: Kind;
  /** the text put in place of the word typed */
  apply: string;
}

interface Open {
  from: number;
  to: number;
  options: Option[];
  selected: number;
}

const MAX_OPTIONS = 12;
const OPERATORS = [':', '!:', '>=', '>', '<=', '<', '==', '!=', 'exists', 'in ('];
const KEYWORDS = ['AND', 'OR', 'NOT', 'group by', 'stats'];
const FIELD_WORD = /[A-Za-z0-9_@$.-]*$/;
const OPERATOR_END = /(?:!?:|==|!=|>=|<=|>|<)\s*$/;
/** `<path> <op>` at the end of the text before a value: the path. */
const FIELD_BEFORE_OPERATOR = /([A-Za-z0-9_@$.`-]+)\s*(?:!?:|==|!=|>=|<=|>|<)\s*$/;
/** a complete field path, then space(s): an operator comes next */
const FIELD_THEN_SPACE = /(?:^|[\s(])([A-Za-z0-9_@$-]+(?:\.(?:[A-Za-z0-9_@$-]+|`(?:[^`]|``)*`))*)\s+$/;
const OPERATOR_WORD = /(?:[:!=<>]+|[a-z]*)$/i;

const setOpen = StateEffect.define<Open | null>();

/** Inside a "string" or a `backquoted key`: no completion there. */
function inQuotes(text: string): boolean {
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote === '"' && c === '\\') i++;
    else if (quote && c === quote) quote = null;
    else if (!quote && (c === '"' || c === '`')) quote = c;
  }
  return quote !== null;
}

function matching(candidates: Array<Omit<Option, 'apply'> & { apply?: string }>, word: string): Option[] {
  const lower = word.toLowerCase();
  const seen = new Set<string>();
  const out: Option[] = [];
  for (const c of candidates) {
    if (!c.label.toLowerCase().startsWith(lower) || seen.has(c.label)) continue;
    seen.add(c.label);
    out.push({ label: c.label, kind: c.kind, apply: c.apply ?? c.label });
    if (out.length === MAX_OPTIONS) break;
  }
  // Nothing to offer when the one option is what is typed already.
  if (out.length === 1 && out[0]!.label.toLowerCase() === lower) return [];
  return out;
}

/** The options at `pos`, or null; `explicit` (Ctrl+Space) offers fields with no word typed yet. */
export function optionsAt(state: EditorState, pos: number, vocabulary: Vocabulary, explicit = false): Open | null {
  const before = state.doc.sliceString(Math.max(0, pos - 500), pos);
  if (inQuotes(before)) return null;

  // A value: after `severity >=` or `dataset:` (and nothing else: other values are open-ended).
  const word = FIELD_WORD.exec(before)![0];
  const head = before.slice(0, before.length - word.length);
  if (OPERATOR_END.test(head)) {
    const field = FIELD_BEFORE_OPERATOR.exec(head)?.[1]?.toLowerCase();
    const values =
      field === 'severity'
        ? severities.map((s) => ({ label: s, kind: 'severity' as const }))
        : field === 'dataset'
          ? vocabulary.datasets.map((d) => ({ label: d, kind: 'dataset' as const }))
          : [];
    const options = matching(values, word);
    return options.length ? { from: pos - word.length, to: pos, options, selected: 0 } : null;
  }

  // An operator: after a field and a space (what is typed of it: `>`, `!`, `ex`).
  const opWord = OPERATOR_WORD.exec(before)![0];
  const beforeOp = before.slice(0, before.length - opWord.length);
  const field = FIELD_THEN_SPACE.exec(beforeOp)?.[1];
  if (field !== undefined && !/^(?:and|or|not|by|stats|group|in|exists)$/i.test(field) && !/[)"]\s*$/.test(beforeOp)) {
    const lowerField = field.toLowerCase();
    const isField = (canonicalFields as readonly string[]).includes(lowerField) || lowerField.startsWith('payload.');
    // A word right after an operator is a value (`message: source`), not a field.
    const trimmed = beforeOp.trimEnd();
    const isValue = OPERATOR_END.test(trimmed.slice(0, trimmed.length - field.length));
    if (isField && !isValue) {
      const options = matching(
        OPERATORS.map((o) => ({ label: o, kind: 'operator' as const, apply: o === 'exists' ? 'exists ' : o === 'in (' ? 'in (' : `${o} ` })),
        opWord,
      );
      return options.length ? { from: pos - opWord.length, to: pos, options, selected: 0 } : null;
    }
  }

  // A field, a keyword or a function.
  if (!word && !explicit) return null;
  const inStats = /\bstats\b/i.test(head);
  const candidates = [
    ...KEYWORDS.map((k) => ({ label: k, kind: 'keyword' as const, apply: `${k} ` })),
    ...(inStats ? statsFunctions.map((f) => ({ label: `${f}(`, kind: 'function' as const })) : []),
    ...canonicalFields.map((f) => ({ label: f, kind: 'field' as const })),
    ...vocabulary.payloadKeys.map((k) => ({ label: k, kind: 'payload' as const })),
  ];
  const options = matching(candidates, word);
  return options.length ? { from: pos - word.length, to: pos, options, selected: 0 } : null;
}

const labels: Record<Kind, string> = {
  keyword: 'keyword',
  field: 'field',
  payload: 'payload key',
  operator: 'operator',
  severity: 'severity',
  dataset: 'dataset',
  function: 'function',
};

function accept(view: EditorView, open: Open, index: number): void {
  const option = open.options[index];
  if (!option) return;
  view.dispatch({
    changes: { from: open.from, to: open.to, insert: option.apply },
    selection: { anchor: open.from + option.apply.length },
    effects: setOpen.of(null),
    userEvent: 'input.complete',
  });
}

function listTooltip(open: Open): Tooltip {
  return {
    pos: open.from,
    above: false,
    create(view) {
      const dom = document.createElement('div');
      dom.className = 'soql-completions';
      const list = document.createElement('ul');
      list.id = 'soql-completions';
      list.setAttribute('role', 'listbox');
      list.setAttribute('aria-label', 'Completions');
      list.setAttribute('data-testid', 'soql-completions');
      open.options.forEach((option, i) => {
        const item = document.createElement('li');
        item.id = `soql-completion-${i}`;
        item.setAttribute('role', 'option');
        item.setAttribute('aria-selected', String(i === open.selected));
        item.className = `kind-${option.kind}`;
        const label = document.createElement('span');
        label.className = 'label';
        label.textContent = option.label;
        const kind = document.createElement('span');
        kind.className = 'kind';
        kind.textContent = labels[option.kind];
        item.append(label, kind);
        // mousedown, not click: the editor keeps the focus. (A new list is made for each change
        // of `open`, so this one is current.)
        item.addEventListener('mousedown', (event) => {
          event.preventDefault();
          accept(view, open, i);
        });
        list.append(item);
      });
      dom.append(list);
      return { dom };
    },
  };
}

function field(vocabulary: () => Vocabulary) {
  return StateField.define<Open | null>({
    create: () => null,
    update(open, tr) {
      for (const effect of tr.effects) if (effect.is(setOpen)) return effect.value;
      if (tr.docChanged) {
        const pos = tr.state.selection.main.head;
        // Typing opens (or refilters) the list; deleting refilters an open one; anything else closes it.
        if (tr.isUserEvent('input.type') || (open && tr.isUserEvent('delete'))) return optionsAt(tr.state, pos, vocabulary());
        return null;
      }
      if (open && tr.selection) {
        const head = tr.state.selection.main.head;
        return tr.state.selection.main.empty && head === open.to ? open : null;
      }
      return open;
    },
    provide: (f) => [
      showTooltip.from(f, (open) => (open ? listTooltip(open) : null)),
      EditorView.contentAttributes.from(f, (open): Record<string, string> =>
        open
          ? { 'aria-autocomplete': 'list', 'aria-haspopup': 'listbox', 'aria-expanded': 'true', 'aria-controls': 'soql-completions', 'aria-activedescendant': `soql-completion-${open.selected}` }
          : { 'aria-autocomplete': 'list', 'aria-haspopup': 'listbox', 'aria-expanded': 'false' },
      ),
    ],
  });
}

/** The completion extension; `vocabulary` is read at each keystroke (the events shown change). */
export function soqlCompletion(vocabulary: () => Vocabulary): Extension {
  const completionField = field(vocabulary);
  const move =
    (by: number): Command =>
    (view) => {
      const open = view.state.field(completionField);
      if (!open) return false;
      const selected = (open.selected + by + open.options.length) % open.options.length;
      view.dispatch({ effects: setOpen.of({ ...open, selected }) });
      return true;
    };
  const take: Command = (view) => {
    const open = view.state.field(completionField);
    if (!open) return false;
    accept(view, open, open.selected);
    return true;
  };
  const close: Command = (view) => {
    if (!view.state.field(completionField)) return false;
    view.dispatch({ effects: setOpen.of(null) });
    return true;
  };
  const openHere: Command = (view) => {
    const open = optionsAt(view.state, view.state.selection.main.head, vocabulary(), true);
    view.dispatch({ effects: setOpen.of(open) });
    return true;
  };
  return [
    completionField,
    Prec.highest(
      keymap.of([
        { key: 'ArrowDown', run: move(1) },
        { key: 'ArrowUp', run: move(-1) },
        { key: 'Enter', run: take },
        { key: 'Tab', run: take },
        { key: 'Escape', run: close },
        { key: 'Ctrl-Space', run: openHere },
        // Running the query closes the list, and the run goes on (false: the next binding runs).
        { key: 'Mod-Enter', run: (view) => (close(view), false) },
        { key: 'Ctrl-Enter', run: (view) => (close(view), false) },
      ]),
    ),
    EditorView.focusChangeEffect.of((_state, focusing) => (focusing ? null : setOpen.of(null))),
  ];
}
