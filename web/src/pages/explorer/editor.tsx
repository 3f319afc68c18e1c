// The SOQL editor: CodeMirror 6 with SOQL highlighting, completions (soql-complete.ts),
// Ctrl/Cmd+Enter to run, and the API's parse error underlined at its position (a mark
// decoration, cleared by the next edit).
// It lives in a shadow root: there CodeMirror adds its styles as constructed style sheets,
// which the dashboard's CSP (`default-src 'self'`, no inline styles) allows; in the document it
// would add a <style> element, which the CSP blocks. Our own editor styles join them the same way.
import type { JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { Annotation, EditorState, StateEffect, StateField, type Extension } from '@codemirror/state';
import { Decoration, EditorView, keymap, placeholder, type DecorationSet } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { soqlCompletion, type Vocabulary } from './soql-complete';
import { soqlHighlighting, soqlLanguage } from './soql-language';
import editorCss from './editor.css?inline';

interface EditorError {
  position: number;
  message: string;
}

const setError = StateEffect.define<EditorError | null>();
/** Marks a change pushed from outside (not typed): it is not reported back through onChange. */
const fromProps = Annotation.define<boolean>();
const errorMark = Decoration.mark({ class: 'soql-error', attributes: { 'data-testid': 'soql-error-mark' } });

/** The range underlined for an error at `position`: the word there, or the last character at the end. */
function errorRange(doc: string, position: number): { from: number; to: number } | null {
  if (doc.length === 0) return null;
  if (position >= doc.length) return { from: doc.length - 1, to: doc.length };
  const from = Math.max(0, position);
  let to = from + 1;
  if (doc.charAt(from) === '"') {
    // A string: to its closing quote, or to the end when it is not closed.
    while (to < doc.length && doc.charAt(to) !== '"') to += doc.charAt(to) === '\\' ? 2 : 1;
    to = Math.min(doc.length, to + 1);
  } else if (/[A-Za-z0-9_@$.\-*`]/.test(doc.charAt(from))) {
    while (to < doc.length && /[A-Za-z0-9_@$.\-*`]/.test(doc.charAt(to))) to++;
  }
  return { from, to };
}

const errorField = StateField.define<{ marks: DecorationSet; message: string }>({
  create: () => ({ marks: Decoration.none, message: '' }),
  update(value, tr) {
    for (const effect of tr.effects) {
      if (!effect.is(setError)) continue;
      const range = effect.value === null ? null : errorRange(tr.state.doc.toString(), effect.value.position);
      return range ? { marks: Decoration.set([errorMark.range(range.from, range.to)]), message: effect.value!.message } : { marks: Decoration.none, message: '' };
    }
    return tr.docChanged ? { marks: Decoration.none, message: '' } : value;
  },
  provide: (f) => [
    EditorView.decorations.from(f, (v) => v.marks),
    // The message is the editor's description while it stands (the note below says it too).
    EditorView.contentAttributes.from(f, (v): Record<string, string> => (v.message ? { 'aria-invalid': 'true', 'aria-description': v.message } : {})),
  ],
});

/**
 * Typing over a selection is done here, not by the browser. Chromium, replacing a selection
 * that spans several highlighted tokens, keeps the deleted text's look for what is typed by
 * writing a style attribute on a new span ("typing style"): the CSP refuses it and logs
 * "Applying inline style violates … default-src 'self'". Cancelling that `beforeinput` and
 * making the same change as a transaction leaves the DOM to CodeMirror.
 */
const typeOverSelection = EditorView.domEventHandlers({
  beforeinput(event, view) {
    if (event.inputType !== 'insertText' || !event.data || view.composing || view.state.selection.ranges.every((r) => r.empty)) return false;
    event.preventDefault();
    view.dispatch(view.state.replaceSelection(event.data), { userEvent: 'input.type', scrollIntoView: true });
    return true;
  },
});

let sheet: CSSStyleSheet | undefined;
const noVocabulary: Vocabulary = { payloadKeys: [], datasets: [] };

/**
 * The editor owns its text: typing changes CodeMirror's document, which is reported through
 * `onChange`, and nothing typed ever comes back in. A text from outside (click-to-filter,
 * back/forward, a link) is pushed as a new `external` object: each new one replaces the text
 * when it differs. (Comparing a `value` prop with the last text reported does not work: Preact
 * runs effects after paint, so an effect can hold a text several keystrokes old, and replacing
 * the document with it loses what was typed since and can leave the cursor before it.)
 */
export function SoqlEditor(props: {
  /** The text to start with, then each text set from outside, as a new object. */
  external: { text: string };
  onChange: (value: string) => void;
  /** Ctrl/Cmd+Enter: run the editor's text (as it is now, perhaps not yet rendered as `draft`). */
  onRun: (text: string) => void;
  /** The parse error of the query `text`, shown while the editor holds that text, or null. */
  error: (EditorError & { text: string }) | null;
  label: string;
  /** Payload keys and datasets to offer as completions (those of the events shown). */
  vocabulary?: Vocabulary;
}): JSX.Element {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | undefined>(undefined);
  // The latest callbacks, read by the editor's listeners (created once).
  const latest = useRef(props);
  latest.current = props;

  useEffect(() => {
    const extensions: Extension[] = [
      history(),
      keymap.of([
        { key: 'Mod-Enter', run: (v) => (latest.current.onRun(v.state.doc.toString()), true), preventDefault: true },
        { key: 'Ctrl-Enter', run: (v) => (latest.current.onRun(v.state.doc.toString()), true), preventDefault: true },
        ...defaultKeymap,
        ...historyKeymap,
      ]),
      soqlLanguage,
      soqlHighlighting,
      soqlCompletion(() => latest.current.vocabulary ?? noVocabulary),
      typeOverSelection,
      errorField,
      EditorView.lineWrapping,
      placeholder('severity >= warn AND source:eu*   (empty: every event)'),
      EditorView.contentAttributes.of({
        'aria-label': props.label,
        'aria-multiline': 'true',
        'data-testid': 'soql-input',
        spellcheck: 'false',
        autocapitalize: 'off',
        autocorrect: 'off',
      }),
      EditorView.updateListener.of((update) => {
        if (!update.docChanged || update.transactions.some((tr) => tr.annotation(fromProps))) return;
        latest.current.onChange(update.state.doc.toString());
      }),
    ];
    const shadow = host.current!.shadowRoot ?? host.current!.attachShadow({ mode: 'open' });
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(editorCss);
    }
    shadow.adoptedStyleSheets = [sheet];
    const parent = document.createElement('div');
    shadow.replaceChildren(parent);
    const v = new EditorView({ state: EditorState.create({ doc: props.external.text, extensions }), parent, root: shadow });
    view.current = v;
    return () => v.destroy();
  }, []);

  // A text set from outside replaces the document (the cursor goes to its end); the parent has
  // its text already, so the change is not reported back.
  useEffect(() => {
    const v = view.current;
    const text = props.external.text;
    // (An effect left behind by a newer push does nothing.)
    if (!v || props.external !== latest.current.external || v.state.doc.toString() === text) return;
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text }, selection: { anchor: text.length }, annotations: fromProps.of(true) });
  }, [props.external]);

  // The error is underlined only in the text it was found in (not in one typed since).
  const error = props.error;
  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const applies = error !== null && v.state.doc.toString() === error.text;
    v.dispatch({ effects: setError.of(applies ? { position: error.position, message: error.message } : null) });
  }, [error?.position, error?.message, error?.text]);

  return <div ref={host} class="soql-editor" />;
}
