/**
 * String semantics of the in-memory evaluator, written to agree with DuckDB (which the
 * DuckDB back end relies on) rather than with JavaScript's defaults:
 * - case folding: DuckDB's ILIKE lower-cases each code point on its own (simple mapping);
 *   JavaScript's toLowerCase applies the full, context-sensitive mapping, which differs only for
 *   U+0130 (İ → "i̇", two code points) and for Σ at the end of a word (→ ς). Those two take
 *   the slow path below.
 * - ordering: DuckDB compares UTF-8 bytes, i.e. code points; JavaScript's `<` compares UTF-16
 *   code units, which puts U+10000… before U+E000…U+FFFF.
 * Known gap: characters newer than DuckDB's Unicode tables (e.g. Unicode 16 scripts) may
 * lower-case differently on the two sides.
 */

const CONTEXT_SENSITIVE = /[\u0130\u03A3]/;

/**
 * The last text folded, and its fold: the predicates of many match monitors (or live tail
 * sessions) test the same field of the same event one after the other (`source:*node-1`,
 * `source:*node-2`, …), so that field is folded once rather than once per monitor.
 */
let lastText = '';
let lastFolded = '';

/** Lower-cases each code point independently, like DuckDB's lower() and ILIKE. */
export function foldCase(s: string): string {
  if (s === lastText) return lastFolded;
  let out: string;
  if (!CONTEXT_SENSITIVE.test(s)) {
    out = s.toLowerCase();
  } else {
    out = '';
    for (const ch of s) out += ch === '\u0130' ? 'i' : ch.toLowerCase();
  }
  lastText = s;
  lastFolded = out;
  return out;
}

/** Moves surrogates (code points above U+FFFF) after U+E000–U+FFFF, giving code point order. */
const rank = (unit: number): number => (unit < 0xd800 ? unit : unit >= 0xe000 ? unit - 0x800 : unit + 0x2000);

/** Negative, zero or positive as `a` sorts before, with or after `b` in code point order. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}

/**
 * Whole-string match of a pattern where `*` stands for any run of characters (possibly empty).
 * Greedy leftmost placement of the middle pieces is exact for `*`-only patterns and runs in
 * O(text × pattern) at worst: no regular expression, so no backtracking blow-up.
 */
export function wildcardMatch(text: string, pattern: string): boolean {
  return wildcardMatcher(pattern)(text);
}

/**
 * `wildcardMatch` with the pattern split once: the test of one pattern against many texts (live
 * tail and match monitors run it per event; splitting per call was a fifth of a match monitor's CPU).
 */
export function wildcardMatcher(pattern: string): (text: string) => boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return (text) => text === pattern;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  const middle = parts.slice(1, -1).filter((part) => part !== '');
  const fixed = first.length + last.length;
  return (text) => {
    if (text.length < fixed || !text.startsWith(first) || !text.endsWith(last)) return false;
    const end = text.length - last.length;
    let pos = first.length;
    for (let i = 0; i < middle.length; i++) {
      const part = middle[i]!;
      const at = text.indexOf(part, pos);
      if (at < 0 || at + part.length > end) return false;
      pos = at + part.length;
    }
    return true;
  };
}
