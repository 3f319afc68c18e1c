/**
 * Loki's stream selector in Prometheus label syntax, as the protobuf PushRequest carries a
 * stream's labels: `{job="varlogs", filename="/var/log/a.log"}`. Names are
 * `[a-zA-Z_][a-zA-Z0-9_]*`; values are double-quoted with the escapes `\"`, `\\`, `\n`, `\t`
 * and `\r`; pairs are separated by commas, with optional spaces around everything; a name may
 * appear once; `{}` is no labels.
 */
export class LabelSyntaxError extends Error {}

const nameStart = /[a-zA-Z_]/;
const namePart = /[a-zA-Z0-9_]/;
const escapes: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', t: '\t', r: '\r' };

export function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = Object.create(null) as Record<string, string>;
  let i = 0;
  const fail = (what: string): never => {
    throw new LabelSyntaxError(`the stream labels ${JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text)} are not in label syntax ({name="value", …}): ${what} at offset ${i}`);
  };
  const spaces = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
  };
  spaces();
  if (text[i] !== '{') fail('expected "{"');
  i++;
  spaces();
  if (text[i] === '}') {
    i++;
    spaces();
    if (i !== text.length) fail('unexpected text after "}"');
    return { ...labels };
  }
  for (;;) {
    spaces();
    const start = i;
    if (i >= text.length || !nameStart.test(text[i]!)) fail('expected a label name');
    while (i < text.length && namePart.test(text[i]!)) i++;
    const name = text.slice(start, i);
    spaces();
    if (text[i] !== '=') fail('expected "="');
    i++;
    spaces();
    if (text[i] !== '"') fail('expected a double-quoted value');
    i++;
    let value = '';
    for (;;) {
      if (i >= text.length) fail('unterminated value');
      const c = text[i]!;
      if (c === '"') break;
      if (c === '\\') {
        const escaped = escapes[text[i + 1] ?? ''];
        if (escaped === undefined) fail('unknown escape');
        value += escaped;
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    i++;
    if (Object.hasOwn(labels, name)) fail(`label ${name} appears twice`);
    labels[name] = value;
    spaces();
    if (text[i] === ',') {
      i++;
      spaces();
      // A trailing comma before "}" is accepted, as Prometheus does.
      if (text[i] !== '}') continue;
    }
    if (text[i] !== '}') fail('expected "," or "}"');
    i++;
    spaces();
    if (i !== text.length) fail('unexpected text after "}"');
    return { ...labels };
  }
}

/** The labels in the syntax parseLabels reads (what Loki's clients write); for tests and fixtures. */
export function formatLabels(labels: Record<string, string>): string {
  const escape = (value: string) => value.replace(/[\\"\n\t\r]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\t': '\\t', '\r': '\\r' })[c]!);
  return `{${Object.entries(labels)
    .map(([name, value]) => `${name}="${escape(value)}"`)
    .join(', ')}}`;
}
